package knowledge

import (
	"context"

	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// This file serves aura_list_world_certificates. Certificates are
// gateway-wide (they describe models, not a tenant's data): every tenant
// lists the same ones, and only the operator imports them. Each is
// verified when it is listed, against the issuers configured now and at the
// service's clock (package certs says how).
//
// Certificates grant no authority. Nothing in the gateway other than this
// listing reads them: no scope, tool allowlist, tenant, compartment,
// purpose or policy decision depends on them.

// CertificateStatement is the reminder every certificate listing carries.
const CertificateStatement = "Certificates are information only: they grant no authority to act anywhere in this gateway. " +
	"Every call is still decided by its token's scopes, tenant and claims, and by policy."

// CertificateView is one certificate as the listing shows it.
type CertificateView struct {
	ID           string   `json:"id"`
	Issuer       string   `json:"issuer"`
	Subject      string   `json:"subject"`
	Capabilities []string `json:"capabilities"`
	IssuedAt     string   `json:"issuedAt"`
	ExpiresAt    string   `json:"expiresAt"`
	Verification string   `json:"verification"`
	Detail       string   `json:"detail,omitempty"`
}

// CertificateList is the answer of aura_list_world_certificates.
type CertificateList struct {
	Certificates []CertificateView `json:"certificates"`
	Statement    string            `json:"statement"`
}

// view verifies a stored certificate at the service's clock.
func (k *Knowledge) view(cert certs.Certificate) CertificateView {
	result, detail := certs.Verify(cert, k.cur.Load().issuers, k.now())
	return CertificateView{ID: cert.ID, Issuer: cert.Issuer, Subject: cert.Subject, Capabilities: cert.Capabilities,
		IssuedAt: cert.IssuedAt, ExpiresAt: cert.ExpiresAt, Verification: result, Detail: detail}
}

// listWorldCertificates serves aura_list_world_certificates: by id,
// optionally of one issuer.
func (k *Knowledge) listWorldCertificates(ctx context.Context, tx store.ReadTx, e *op.Request) (any, error) {
	stored, err := tx.ListCertificates(ctx, op.StringArg(e.Args, "issuer"))
	if err != nil {
		return nil, err
	}
	out := CertificateList{Certificates: []CertificateView{}, Statement: CertificateStatement}
	limit := limitArg(e.Args)
	for _, c := range stored {
		if len(out.Certificates) == limit {
			break
		}
		cert, err := certs.Parse(c.Doc)
		if err != nil {
			// Imports validate every certificate: one that no longer
			// parses was written by something else. It is left out, never
			// shown as if it were whole.
			k.log.ErrorContext(ctx, "a stored certificate does not parse", "id", c.ID, "err", err)
			continue
		}
		out.Certificates = append(out.Certificates, k.view(cert))
	}
	e.Event("certificates.listed", map[string]any{"returned": len(out.Certificates)})
	return out, nil
}
