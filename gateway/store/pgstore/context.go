package pgstore

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the purpose-filtered context and the certificates
// (migration 0005). A record's purposes and tags are JSON arrays; the
// purpose filter runs in SQL (jsonb containment), so a record outside the purpose
// never leaves the database.

func (t *txn) GetContextRecord(ctx context.Context, kind, tenant, id string) (store.ContextRecord, error) {
	v, err := sqlrow.ContextRecord(t.q.QueryRow(ctx, `SELECT `+sqlrow.ContextColumns+` FROM context_records
		WHERE kind = $1 AND tenant = $2 AND id = $3`, kind, tenant, id))
	return v, rowErr("context record", err)
}

func (t *txn) ListContextRecords(ctx context.Context, kind, tenant, compartment, purpose string) ([]store.ContextRecord, error) {
	rows, err := t.q.Query(ctx, `SELECT `+sqlrow.ContextColumns+` FROM context_records
		WHERE kind = $1 AND tenant = $2 AND ($3::text = '' OR compartment = $3::text)
		AND ($4::text = '' OR purposes::jsonb @> jsonb_build_array($4::text))
		ORDER BY id`, kind, tenant, compartment, purpose)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list context records: %w", err)
	}
	defer rows.Close()
	var out []store.ContextRecord
	for rows.Next() {
		r, err := sqlrow.ContextRecord(rows)
		if err != nil {
			return nil, rowErr("context record", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: list context records: %w", err)
	}
	return out, nil
}

// jsonStrings renders a string list as a JSON array, never null.

func (t *txn) PutContextRecord(ctx context.Context, r store.ContextRecord) error {
	purposes, err := sqlrow.JSONStrings(r.Purposes)
	if err != nil {
		return fmt.Errorf("pgstore: put context record: %w", err)
	}
	tags, err := sqlrow.JSONStrings(r.Tags)
	if err != nil {
		return fmt.Errorf("pgstore: put context record: %w", err)
	}
	_, err = t.q.Exec(ctx, `INSERT INTO context_records (`+sqlrow.ContextColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (kind, tenant, id) DO UPDATE SET compartment = excluded.compartment, purposes = excluded.purposes,
		tags = excluded.tags, doc = excluded.doc, created_at = excluded.created_at, updated_at = excluded.updated_at`,
		r.Kind, r.Tenant, r.ID, r.Compartment, purposes, tags, sqlrow.NonNilBytes(r.Doc), sqlrow.Nanos(r.CreatedAt), sqlrow.Nanos(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("pgstore: put context record: %w", err)
	}
	return nil
}

func (t *txn) GetCertificate(ctx context.Context, id string) (store.Certificate, error) {
	v, err := sqlrow.Certificate(t.q.QueryRow(ctx, `SELECT `+sqlrow.CertificateColumns+` FROM world_certificates WHERE id = $1`, id))
	return v, rowErr("certificate", err)
}

func (t *txn) ListCertificates(ctx context.Context, issuer string) ([]store.Certificate, error) {
	rows, err := t.q.Query(ctx, `SELECT `+sqlrow.CertificateColumns+` FROM world_certificates
		WHERE $1::text = '' OR issuer = $1::text ORDER BY id`, issuer)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list certificates: %w", err)
	}
	defer rows.Close()
	var out []store.Certificate
	for rows.Next() {
		c, err := sqlrow.Certificate(rows)
		if err != nil {
			return nil, rowErr("certificate", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: list certificates: %w", err)
	}
	return out, nil
}

func (t *txn) PutCertificate(ctx context.Context, c store.Certificate) error {
	_, err := t.q.Exec(ctx, `INSERT INTO world_certificates (`+sqlrow.CertificateColumns+`) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET issuer = excluded.issuer, subject = excluded.subject, doc = excluded.doc,
		created_at = excluded.created_at, updated_at = excluded.updated_at`,
		c.ID, c.Issuer, c.Subject, sqlrow.NonNilBytes(c.Doc), sqlrow.Nanos(c.CreatedAt), sqlrow.Nanos(c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("pgstore: put certificate: %w", err)
	}
	return nil
}
