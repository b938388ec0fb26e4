package dirload

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/praxa/praxa/gateway/config"
)

// TestRead: the files with the extension, dot files and dot directories
// skipped, in path order, named under Display; a file over the size is an
// error of its own, one with problems a *config.LoadError.
func TestRead(t *testing.T) {
	fsys := fstest.MapFS{
		"d/b.x":        {Data: []byte("ok")},
		"d/a/c.x":      {Data: []byte("bad")},
		"d/.hidden.x":  {Data: []byte("ok")},
		"d/.git/e.x":   {Data: []byte("ok")},
		"d/other.y":    {Data: []byte("ok")},
		"d/big.x":      {Data: []byte(strings.Repeat("z", 11))},
		"file-not-dir": {Data: []byte("")},
	}
	var seen []string
	errs, err := Read(Dir{FS: fsys, Path: "d", Display: "cfg/d", Prefix: "things", Setting: "things.dir", Ext: ".x", MaxFileSize: 10},
		func(f File) []config.Problem {
			seen = append(seen, f.Rel+"="+f.Name)
			if string(f.Data) == "bad" {
				return []config.Problem{{Message: "bad"}}
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/c.x=cfg/d/a/c.x", "b.x=cfg/d/b.x"}; !slices.Equal(seen, want) {
		t.Errorf("parsed %v, want %v", seen, want)
	}
	var le *config.LoadError
	if len(errs) != 2 || !errors.As(errs[0], &le) || le.File != "cfg/d/a/c.x" ||
		!strings.Contains(errs[1].Error(), "cfg/d/big.x: the file is larger than 10 bytes") {
		t.Errorf("errors %v", errs)
	}
	for path, want := range map[string]string{
		"missing":      "things: the directory cfg/d (things.dir) does not exist",
		"file-not-dir": "things: cfg/d (things.dir) is not a directory",
	} {
		_, err := Read(Dir{FS: fsys, Path: path, Display: "cfg/d", Prefix: "things", Setting: "things.dir", Ext: ".x", MaxFileSize: 10},
			func(File) []config.Problem { return nil })
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", path, err, want)
		}
	}
}

// TestCatalog: ids stay sorted and unique as they are added; nil is empty.
func TestCatalog(t *testing.T) {
	var c Catalog[int]
	for i, id := range []string{"b", "a", "c", "a"} {
		c.Add(id, i)
	}
	if got := c.IDs(); !slices.Equal(got, []string{"a", "b", "c"}) || c.Len() != 3 {
		t.Errorf("IDs %v, Len %d", got, c.Len())
	}
	if v, ok := c.Lookup("a"); !ok || v != 3 {
		t.Errorf("Lookup(a) = %d, %v; want the last added, 3", v, ok)
	}
	var none *Catalog[int]
	if _, ok := none.Lookup("a"); ok || none.Len() != 0 || none.IDs() != nil {
		t.Error("a nil catalog is not empty")
	}
}
