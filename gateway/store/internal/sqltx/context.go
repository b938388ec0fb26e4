package sqltx

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the purpose-filtered context and the certificates
// (migration 0005). A record's purposes and tags are JSON arrays; the
// purpose filter runs in SQL (the Dialect's HasPurpose), so a record
// outside the purpose never leaves the database.

// GetContextRecord implements store.ContextReadTx.
func (t *Tx) GetContextRecord(ctx context.Context, kind, tenant, id string) (store.ContextRecord, error) {
	v, err := sqlrow.ContextRecord(t.queryRow(ctx, `SELECT `+sqlrow.ContextColumns+` FROM context_records
		WHERE kind = ? AND tenant = ? AND id = ?`, kind, tenant, id))
	return v, t.rowErr("context record", err)
}

// listContextSQL is the dialect's query of ListContextRecords, built once.
func (d *Dialect) listContextSQL() string {
	d.listContextOnce.Do(func() {
		d.listContext = `SELECT ` + sqlrow.ContextColumns + ` FROM context_records
		WHERE kind = ? AND tenant = ? AND (? = '' OR compartment = ?)
		AND ` + d.HasPurpose + `
		ORDER BY id`
	})
	return d.listContext
}

// ListContextRecords implements store.ContextReadTx.
func (t *Tx) ListContextRecords(ctx context.Context, kind, tenant, compartment, purpose string) ([]store.ContextRecord, error) {
	return list(ctx, t, "list context records", "context record", sqlrow.ContextRecord, t.Dialect.listContextSQL(), unlimited,
		kind, tenant, compartment, compartment, purpose, purpose)
}

// PutContextRecord implements store.ContextTx.
func (t *Tx) PutContextRecord(ctx context.Context, r store.ContextRecord) error {
	purposes, err := sqlrow.JSONStrings(r.Purposes)
	if err != nil {
		return t.wrap("put context record", err)
	}
	tags, err := sqlrow.JSONStrings(r.Tags)
	if err != nil {
		return t.wrap("put context record", err)
	}
	return t.put(ctx, "put context record", `INSERT INTO context_records (`+sqlrow.ContextColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (kind, tenant, id) DO UPDATE SET compartment = excluded.compartment, purposes = excluded.purposes,
		tags = excluded.tags, doc = excluded.doc, created_at = excluded.created_at, updated_at = excluded.updated_at`,
		r.Kind, r.Tenant, r.ID, r.Compartment, purposes, tags, sqlrow.NonNilBytes(r.Doc), sqlrow.Nanos(r.CreatedAt), sqlrow.Nanos(r.UpdatedAt))
}

// GetCertificate implements store.ContextReadTx.
func (t *Tx) GetCertificate(ctx context.Context, id string) (store.Certificate, error) {
	v, err := sqlrow.Certificate(t.queryRow(ctx, `SELECT `+sqlrow.CertificateColumns+` FROM world_certificates WHERE id = ?`, id))
	return v, t.rowErr("certificate", err)
}

// ListCertificates implements store.ContextReadTx.
func (t *Tx) ListCertificates(ctx context.Context, issuer string) ([]store.Certificate, error) {
	return list(ctx, t, "list certificates", "certificate", sqlrow.Certificate, `SELECT `+sqlrow.CertificateColumns+` FROM world_certificates
		WHERE ? = '' OR issuer = ? ORDER BY id`, unlimited, issuer, issuer)
}

// PutCertificate implements store.ContextTx.
func (t *Tx) PutCertificate(ctx context.Context, c store.Certificate) error {
	return t.put(ctx, "put certificate", `INSERT INTO world_certificates (`+sqlrow.CertificateColumns+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET issuer = excluded.issuer, subject = excluded.subject, doc = excluded.doc,
		created_at = excluded.created_at, updated_at = excluded.updated_at`,
		c.ID, c.Issuer, c.Subject, sqlrow.NonNilBytes(c.Doc), sqlrow.Nanos(c.CreatedAt), sqlrow.Nanos(c.UpdatedAt))
}
