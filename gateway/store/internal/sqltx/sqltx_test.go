package sqltx

import "testing"

func TestNumber(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`WHERE a = ? AND b = ?`, `WHERE a = $1 AND b = $2`},
		{`SET owner = '', status = ? WHERE (? = '' OR s = ?)`, `SET owner = '', status = $1 WHERE ($2 = '' OR s = $3)`},
		{`WHERE a = '?' AND "b?" = ? LIMIT ?`, `WHERE a = '?' AND "b?" = $1 LIMIT $2`},
		{`(?::text = '' OR p @> jsonb_build_array(?::text))`, `($1::text = '' OR p @> jsonb_build_array($2::text))`},
	} {
		if got := Number(c.in); got != c.want {
			t.Errorf("Number(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestBindCaches(t *testing.T) {
	d := &Dialect{Numbered: true}
	q := `WHERE a = ? AND b = ?`
	if got := d.bind(q); got != `WHERE a = $1 AND b = $2` {
		t.Fatalf("bind = %q", got)
	}
	if len(d.rebound) != 1 {
		t.Fatalf("cache holds %d queries, want 1", len(d.rebound))
	}
	if n := testing.AllocsPerRun(100, func() { d.bind(q) }); n != 0 {
		t.Errorf("a cached bind allocates %v times", n)
	}
	if got := (&Dialect{}).bind(q); got != q {
		t.Errorf("an unnumbered dialect rewrote %q to %q", q, got)
	}
}
