package skills

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/praxa/praxa/gateway/config"
)

func TestCompareVersions(t *testing.T) {
	// Each list is in ascending order; neighbours compare as listed.
	ordered := []string{
		"0.1", "0.9.9", "1.0.0-0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
		"1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2", "1.10", "2", "2.0.1.5", "10.0.0",
		"99999999999999999999",
	}
	for i := range ordered {
		for j := range ordered {
			got := CompareVersions(ordered[i], ordered[j])
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if sign(got) != want {
				t.Errorf("CompareVersions(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	for _, same := range [][2]string{{"1.2", "1.2.0"}, {"1", "1.0.0.0"}, {"1.0.0+build.5", "1.0.0"}, {"1.0.0-rc.1+a", "1.0.0-rc.1+b"}} {
		if c := CompareVersions(same[0], same[1]); c != 0 {
			t.Errorf("CompareVersions(%s, %s) = %d, want 0", same[0], same[1], c)
		}
	}
	for _, bad := range []string{"", "v1", "1.", ".1", "01.2", "1.02", "1.0.0-", "1.0.0-01", "1.0.0+", "1..0", "1.0.0-a_b",
		"1.0.0-rc.1." + strings.Repeat("a", 30), "latest"} {
		if ValidVersion(bad) {
			t.Errorf("ValidVersion(%q) = true", bad)
		}
	}
	for _, good := range []string{"0", "1.0", "1.2.3-rc.1+sha.5114f85", "1.0.0-x-y-z.--", "2024.5.1"} {
		if !ValidVersion(good) {
			t.Errorf("ValidVersion(%q) = false", good)
		}
	}
}

func TestStatesMatchTheContract(t *testing.T) {
	if want := []string{StateDraft, StateReviewed, StateValidated, StateDeprecated}; !slices.Equal(states, want) {
		t.Errorf("contracts.SkillEvidenceStates() = %v, the constants %v", states, want)
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

const good = `---
id: deploy
version: 1.1.0
title: Deploy
tags: [a, b]
evidence:
  state: validated
  reviewedBy: [x]
  reviewedAt: 2025-05-02
  summary: Works.
  refs: [https://example.com]
---

# Body

text
`

func TestLoadExamples(t *testing.T) {
	c, err := Load(os.DirFS(filepath.Join("..", "..", "examples")), "skills", "examples/skills")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.IDs(); !slices.Equal(got, []string{"deploy-checklist", "incident-review"}) {
		t.Fatalf("IDs = %v", got)
	}
	s, _ := c.Lookup("deploy-checklist")
	var versions []string
	for _, v := range s.Versions {
		versions = append(versions, v.Version+":"+v.Evidence.State)
	}
	if want := []string{"2.0.0-rc.1:draft", "1.1.0:validated", "1.0.0:deprecated"}; !slices.Equal(versions, want) {
		t.Errorf("versions %v, want %v", versions, want)
	}
	// The newest release, not the newer draft pre-release.
	if s.Latest().Version != "1.1.0" || !strings.HasPrefix(s.Latest().Body, "# Deploy checklist (1.1.0)") {
		t.Errorf("latest %+v", s.Latest())
	}
	if v, ok := s.Find("1.1"); !ok || v.Version != "1.1.0" {
		t.Errorf("Find(1.1) = %v, %v", v, ok)
	}
	if _, ok := s.Find("3.0.0"); ok {
		t.Error("Find(3.0.0) found a version")
	}
	ir, _ := c.Lookup("incident-review")
	if v := ir.Latest(); v.Version != "1.0" || v.Evidence.ReviewedAt != "2025-03-10T09:30:00Z" || v.File != "examples/skills/incident-review.md" {
		t.Errorf("incident-review %+v", v)
	}
}

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"s/a.md":         {Data: []byte(good)},
		"s/sub/b.md":     {Data: []byte(strings.Replace(good, "version: 1.1.0", "version: 1.2", 1))},
		"s/notes.txt":    {Data: []byte("not a skill")},
		"s/.hidden.md":   {Data: []byte("ignored")},
		"s/.git/x.md":    {Data: []byte("ignored")},
		"s/other/c.md":   {Data: []byte(strings.Replace(good, "id: deploy", "id: other", 1))},
		"s/other/d.yaml": {Data: []byte("x")},
	}
	c, err := Load(fsys, "s", "skills")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 2 {
		t.Fatalf("Len = %d", c.Len())
	}
	s, _ := c.Lookup("deploy")
	if len(s.Versions) != 2 || s.Latest().Version != "1.2" || s.Latest().File != "skills/sub/b.md" {
		t.Fatalf("deploy: %+v", s.Versions)
	}
	v := s.Versions[1]
	if v.Body != "# Body\n\ntext" || v.Title != "Deploy" || !slices.Equal(v.Tags, []string{"a", "b"}) ||
		v.Evidence.State != "validated" || v.Evidence.ReviewedAt != "2025-05-02" || v.Evidence.Summary != "Works." {
		t.Errorf("version %+v", v)
	}
	var nilCat *Catalog
	if _, ok := nilCat.Lookup("x"); ok || nilCat.Len() != 0 || nilCat.IDs() != nil {
		t.Error("a nil catalog is not empty")
	}
	if _, err := Load(fsys, "missing", "missing"); err == nil {
		t.Error("a missing directory loaded")
	}
	if _, err := Load(fsys, "s/notes.txt", "notes"); err == nil {
		t.Error("a file loaded as a directory")
	}
}

// TestLoadRefuses: every problem of every file is reported with the file,
// the line and the field, and nothing is loaded.
func TestLoadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // FILE:LINE[:COL]: FIELD: MESSAGE prefixes
	}{
		{"no front matter", "# Title\n", []string{"x.md:1:1: a skill starts with YAML front matter"}},
		{"unclosed", "---\nid: a\n", []string{"x.md:1:1: the front matter is not closed"}},
		{"empty front matter", "---\n---\nbody\n", []string{"x.md:1:1: the front matter is empty"}},
		{"not a mapping", "---\n- a\n---\nbody\n", []string{"x.md:2:1: the front matter must be a YAML mapping"}},
		{"syntax", "---\nid: [a\n---\nbody\n", []string{"x.md:"}},
		{"missing fields", "---\ndescription: d\n---\nbody\n", []string{
			"x.md:2:1: evidence: is required", "x.md:2:1: id: is required", "x.md:2:1: title: is required", "x.md:2:1: version: is required"}},
		{"bad values", "---\nid: not an id\nversion: 1.02\ntitle: ''\ntags: [a, a]\nevidence:\n  state: approved\n  reviewedAt: yesterday\n  extra: 1\nowner: me\n---\nbody\n", []string{
			"x.md:2:5: id: must be an identifier",
			"x.md:3:10: version: must be a version such as 1.2.0",
			"x.md:4:8: title: must not be empty",
			"x.md:5:11: tags[1]: repeats \"a\"",
			"x.md:7:10: evidence.state: must be one of draft, reviewed, validated, deprecated",
			"x.md:8:15: evidence.reviewedAt: must be a date",
			"x.md:9:3: evidence.extra: is not a known field",
			"x.md:10:1: owner: is not a known field"}},
		{"types", "---\nid: a\nversion: 1.0.0\ntitle: yes\ntags: x\nevidence: draft\n---\nbody\n", []string{
			"x.md:5:7: tags: must be a list of strings",
			"x.md:6:11: evidence: must be a mapping"}},
		{"booleans and nulls", "---\nid: a\nversion: 1.0.0\ntitle: true\ndescription:\nevidence: {state: draft}\n---\nbody\n", []string{
			"x.md:4:8: title: must be a string, not the boolean true",
			"x.md:5:13: description: must not be empty"}},
		{"duplicate key", "---\nid: a\nid: b\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n---\nbody\n", []string{
			"x.md:3:1: id: is given twice (first at line 2)"}},
		{"anchor and tag", "---\nid: &x a\nversion: !!str 1.0.0\ntitle: t\nevidence: {state: draft}\n---\nbody\n", []string{
			"x.md:2:5: id: anchors are not allowed", "x.md:3:10: version: explicit tags"}},
		{"empty body", "---\nid: a\nversion: 1.0.0\ntitle: t\nevidence: {state: draft}\n---\n\n  \n", []string{
			"x.md:7:1: the skill has no body"}},
		{"invalid utf-8", "---\nid: \xff\n---\n", []string{"x.md: the file is not valid UTF-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{"d/x.md": {Data: []byte(tc.src)}}, "d", "")
			if err == nil {
				t.Fatal("loaded")
			}
			var le *config.LoadError
			if !errors.As(err, &le) && !strings.Contains(tc.name, "utf") {
				t.Fatalf("%T %v is not a *config.LoadError", err, err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%s", len(lines), len(tc.want), err)
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
					t.Errorf("no problem starts with %q:\n%s", w, err)
				}
			}
		})
	}
}

func TestLoadRefusesDuplicateVersions(t *testing.T) {
	fsys := fstest.MapFS{
		"a.md": {Data: []byte(good)},
		"b.md": {Data: []byte(strings.Replace(good, "version: 1.1.0", "version: 1.1.0+rebuild", 1))},
		"c.md": {Data: []byte(strings.Replace(good, "id: deploy", "id: bad id", 1))},
	}
	_, err := Load(fsys, ".", "skills")
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		"skills/b.md:3:10: version: skill deploy version 1.1.0+rebuild is already defined by skills/a.md (version 1.1.0)",
		"skills/c.md:2:5: id: must be an identifier",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in:\n%s", want, msg)
		}
	}
}

func TestFromConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "conf", "my-skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "conf", "my-skills", "a.md"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Source: filepath.Join(dir, "conf", "praxec.yaml"), Skills: config.Skills{Dir: "my-skills"}}
	c, err := FromConfig(cfg, nil, "")
	if err != nil || c.Len() != 1 {
		t.Fatalf("relative to the file: %v, %v", c, err)
	}
	if s, _ := c.Lookup("deploy"); s.Latest().File != filepath.ToSlash(filepath.Join(dir, "conf", "my-skills", "a.md")) {
		t.Errorf("File = %s", s.Latest().File)
	}
	cfg.Skills.Dir = filepath.Join(dir, "conf", "my-skills")
	if c, err := FromConfig(cfg, nil, ""); err != nil || c.Len() != 1 {
		t.Fatalf("absolute: %v, %v", c, err)
	}
	embedded := fstest.MapFS{"skills/a.md": {Data: []byte(good)}}
	c, err = FromConfig(&config.Config{Skills: config.Skills{Dir: "skills"}}, embedded, "examples")
	if err != nil || c.Len() != 1 {
		t.Fatalf("embedded: %v, %v", c, err)
	}
	if s, _ := c.Lookup("deploy"); s.Latest().File != "examples/skills/a.md" {
		t.Errorf("embedded File = %s", s.Latest().File)
	}
	if c, err := FromConfig(&config.Config{}, embedded, "examples"); err != nil || c.Len() != 0 {
		t.Errorf("no skills section: %v, %v", c, err)
	}
}

// TestLatestIsTheNewestRelease: a read without a version answers the
// newest release, however many newer pre-releases there are; a skill with
// only pre-releases answers its newest pre-release.
func TestLatestIsTheNewestRelease(t *testing.T) {
	version := func(v string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(strings.Replace(good, "version: 1.1.0", "version: "+v, 1))}
	}
	for _, tc := range []struct {
		versions []string
		want     string
	}{
		{[]string{"1.0.0", "1.1.0", "2.0.0-rc.1"}, "1.1.0"},
		{[]string{"1.0.0", "2.0.0-alpha", "2.0.0-beta.2", "1.9"}, "1.9"},
		{[]string{"1.0.0-rc.1", "1.0.0-rc.2", "0.9.0-beta"}, "1.0.0-rc.2"},
		{[]string{"1.0.0-rc.1", "1.0.0"}, "1.0.0"},
		{[]string{"3"}, "3"},
	} {
		fsys := fstest.MapFS{}
		for i, v := range tc.versions {
			fsys[fmt.Sprintf("s/%d.md", i)] = version(v)
		}
		c, err := Load(fsys, "s", "")
		if err != nil {
			t.Fatal(err)
		}
		s, _ := c.Lookup("deploy")
		if got := s.Latest().Version; got != tc.want {
			t.Errorf("%v: latest %s, want %s", tc.versions, got, tc.want)
		}
	}
}
