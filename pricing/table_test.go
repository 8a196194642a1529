package pricing

import (
	"os"
	"strings"
	"testing"
)

func TestParseExample(t *testing.T) {
	b, err := os.ReadFile("../deploy/pricing.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Currency != "USD" || tbl.EffectiveDate != "2026-11-01" {
		t.Errorf("currency %q, effective date %q; want USD, 2026-11-01", tbl.Currency, tbl.EffectiveDate)
	}
	if p, ok := tbl.Compute("us-east-1", Size{1000, 4}); !ok || p != 0.09 {
		t.Errorf("us-east-1 1000/4 = %v, %v; want 0.09", p, ok)
	}
	if _, ok := tbl.Compute("us-east-1", Size{1000, 8}); ok {
		t.Error("a size the file does not list has a price")
	}
	if p, ok := tbl.StorageGBMonth("eu-west-1"); !ok || p != 0.165 {
		t.Errorf("eu-west-1 storage = %v, %v; want 0.165", p, ok)
	}
	if f, ok := tbl.HAReplica(); !ok || f != 1 {
		t.Errorf("ha_replica = %v, %v; want 1", f, ok)
	}
}

// TestParseErrors: every mistake is reported (not only the first), each with
// the path to its key and what to write instead.
func TestParseErrors(t *testing.T) {
	const valid = "currency: USD\neffective_date: 2026-11-01\n"
	for _, c := range []struct {
		name, file string
		want       []string
	}{
		{"empty", "", []string{"--pricing.file: the file is empty"}},
		{"not YAML", "currency: [", []string{"--pricing.file: yaml:"}},
		{"a list", "- a", []string{"--pricing.file: (top level): a list is not a mapping of keys"}},
		{"misspelt key", valid + "compute: {}\nstorge_gb_month: {}\n", []string{"--pricing.file: storge_gb_month: unknown key (did you mean storage_gb_month?)"}},
		{"missing header", "compute: {}\n", []string{
			"--pricing.file: currency: missing: the file must say in which currency its prices are (currency: USD)",
			"--pricing.file: effective_date: missing: the file must say from when its prices hold (effective_date: 2026-11-01)",
		}},
		{"nothing priced", valid, []string{"--pricing.file: compute: missing: give compute or storage_gb_month prices"}},
		{"bad date", "currency: USD\neffective_date: 1.11.2026\ncompute: {}\n", []string{`--pricing.file: effective_date: "1.11.2026" is not a date: write it as YYYY-MM-DD, like 2026-11-01`}},
		{"bad size", valid + "compute:\n  us-east-1: {\"1000x4\": 0.09, \"0/4\": 1}\n", []string{
			`--pricing.file: compute.us-east-1."1000x4": "1000x4" is not a size: write cpu_millis/memory_gbs, both whole numbers above 0, like "1000/4"`,
			`--pricing.file: compute.us-east-1."0/4": "0/4" is not a size`,
		}},
		{"size twice", valid + "compute:\n  us-east-1: {\"1000/4\": 0.09, \"1000/ 4\": 0.1}\n", []string{`--pricing.file: compute.us-east-1."1000/ 4": the size 1000/4 is given twice`}},
		{"region not a mapping", valid + "compute:\n  us-east-1: 0.09\n", []string{`--pricing.file: compute.us-east-1: "0.09" is not a mapping of keys: give a price per size, like us-east-1: {"1000/4": 0.09}`}},
		{"compute one price", valid + "compute: 0.09\n", []string{`--pricing.file: compute: "0.09" is not a mapping of keys: give a price per region and size, like compute: {us-east-1: {"1000/4": 0.09}}`}},
		{"storage one price", valid + "storage_gb_month: 0.15\n", []string{`--pricing.file: storage_gb_month: "0.15" is not a mapping of keys: give a price per region, like storage_gb_month: {us-east-1: 0.15}`}},
		{"price a string", valid + "storage_gb_month: {us-east-1: \"0.15\"}\n", []string{`--pricing.file: storage_gb_month.us-east-1: "0.15" is not a number: write a price like 0.09`}},
		{"negative price", valid + "storage_gb_month: {us-east-1: 0.15}\npooler: -1\n", []string{`--pricing.file: pooler: "-1" is not a price: it must be a finite number at or above 0`}},
		{"NaN", valid + "storage_gb_month: {us-east-1: 0.15}\nha_replica: .nan\n", []string{`--pricing.file: ha_replica: ".nan" is not a price`}},
		{"key twice", valid + "storage_gb_month: {us-east-1: 0.15, us-east-1: 0.2}\n", []string{"--pricing.file: storage_gb_month.us-east-1: the key is given twice"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.file))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks\n%s", err, w)
				}
			}
		})
	}
}

func TestLoadNamesTheFlag(t *testing.T) {
	_, err := Load(t.TempDir() + "/missing.yml")
	if err == nil || !strings.HasPrefix(err.Error(), "--pricing.file: open ") {
		t.Errorf("error %v; want one naming --pricing.file and the open failure", err)
	}
}
