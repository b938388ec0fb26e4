package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
)

// This file holds the purpose-filtered context and the certificates
// (migration 0005). A record's purposes and tags are JSON arrays; the
// purpose filter runs in SQL (json_each), so a record outside the purpose
// never leaves the database.

const contextColumns = `kind, tenant, id, compartment, purposes, tags, doc, created_at, updated_at`

func scanContextRecord(row interface{ Scan(...any) error }) (store.ContextRecord, error) {
	var r store.ContextRecord
	var purposes, tags string
	var created, updated int64
	err := row.Scan(&r.Kind, &r.Tenant, &r.ID, &r.Compartment, &purposes, &tags, &r.Doc, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return r, store.ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("sqlitestore: context record: %w", err)
	}
	if err := json.Unmarshal([]byte(purposes), &r.Purposes); err != nil {
		return r, fmt.Errorf("sqlitestore: context record purposes: %w", err)
	}
	if err := json.Unmarshal([]byte(tags), &r.Tags); err != nil {
		return r, fmt.Errorf("sqlitestore: context record tags: %w", err)
	}
	r.CreatedAt, r.UpdatedAt = fromNanos(created), fromNanos(updated)
	return r, nil
}

func (t *txn) GetContextRecord(ctx context.Context, kind, tenant, id string) (store.ContextRecord, error) {
	return scanContextRecord(t.queryRow(ctx, `SELECT `+contextColumns+` FROM context_records
		WHERE kind = ? AND tenant = ? AND id = ?`, kind, tenant, id))
}

func (t *txn) ListContextRecords(ctx context.Context, kind, tenant, compartment, purpose string) ([]store.ContextRecord, error) {
	rows, err := t.query(ctx, `SELECT `+contextColumns+` FROM context_records
		WHERE kind = ? AND tenant = ? AND (? = '' OR compartment = ?)
		AND (? = '' OR EXISTS (SELECT 1 FROM json_each(context_records.purposes) WHERE json_each.value = ?))
		ORDER BY id`, kind, tenant, compartment, compartment, purpose, purpose)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: list context records: %w", err)
	}
	defer rows.Close()
	var out []store.ContextRecord
	for rows.Next() {
		r, err := scanContextRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: list context records: %w", err)
	}
	return out, nil
}

// jsonStrings renders a string list as a JSON array, never null.
func jsonStrings(list []string) (string, error) {
	if list == nil {
		list = []string{}
	}
	b, err := json.Marshal(list)
	return string(b), err
}

func (t *txn) PutContextRecord(ctx context.Context, r store.ContextRecord) error {
	purposes, err := jsonStrings(r.Purposes)
	if err != nil {
		return fmt.Errorf("sqlitestore: put context record: %w", err)
	}
	tags, err := jsonStrings(r.Tags)
	if err != nil {
		return fmt.Errorf("sqlitestore: put context record: %w", err)
	}
	_, err = t.exec(ctx, `INSERT INTO context_records (`+contextColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (kind, tenant, id) DO UPDATE SET compartment = excluded.compartment, purposes = excluded.purposes,
		tags = excluded.tags, doc = excluded.doc, created_at = excluded.created_at, updated_at = excluded.updated_at`,
		r.Kind, r.Tenant, r.ID, r.Compartment, purposes, tags, nonNilBytes(r.Doc), nanos(r.CreatedAt), nanos(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlitestore: put context record: %w", err)
	}
	return nil
}

const certificateColumns = `id, issuer, subject, doc, created_at, updated_at`

func scanCertificate(row interface{ Scan(...any) error }) (store.Certificate, error) {
	var c store.Certificate
	var created, updated int64
	err := row.Scan(&c.ID, &c.Issuer, &c.Subject, &c.Doc, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return c, store.ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("sqlitestore: certificate: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
	return c, nil
}

func (t *txn) GetCertificate(ctx context.Context, id string) (store.Certificate, error) {
	return scanCertificate(t.queryRow(ctx, `SELECT `+certificateColumns+` FROM world_certificates WHERE id = ?`, id))
}

func (t *txn) ListCertificates(ctx context.Context, issuer string) ([]store.Certificate, error) {
	rows, err := t.query(ctx, `SELECT `+certificateColumns+` FROM world_certificates
		WHERE ? = '' OR issuer = ? ORDER BY id`, issuer, issuer)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: list certificates: %w", err)
	}
	defer rows.Close()
	var out []store.Certificate
	for rows.Next() {
		c, err := scanCertificate(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: list certificates: %w", err)
	}
	return out, nil
}

func (t *txn) PutCertificate(ctx context.Context, c store.Certificate) error {
	_, err := t.exec(ctx, `INSERT INTO world_certificates (`+certificateColumns+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET issuer = excluded.issuer, subject = excluded.subject, doc = excluded.doc,
		created_at = excluded.created_at, updated_at = excluded.updated_at`,
		c.ID, c.Issuer, c.Subject, nonNilBytes(c.Doc), nanos(c.CreatedAt), nanos(c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlitestore: put certificate: %w", err)
	}
	return nil
}
