// Package pricing estimates what each service costs by the hour from a price
// table the user supplies (--pricing.file) and the values of each snapshot:
// the exporter reads no price from the API, which carries none.
package pricing

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/config"
)

// HoursPerMonth turns a monthly storage price into an hourly one, as cloud
// price lists do (365 * 24 / 12).
const HoursPerMonth = 730

// Size is a compute size: CPU in thousandths of a core, memory in GB.
type Size struct {
	CPUMillis, MemoryGBs int64
}

// String writes a size as the price file keys it, "cpu_millis/memory_gbs".
func (s Size) String() string {
	return strconv.FormatInt(s.CPUMillis, 10) + "/" + strconv.FormatInt(s.MemoryGBs, 10)
}

// ParseSize reads "cpu_millis/memory_gbs", both whole numbers above 0.
func ParseSize(v string) (Size, error) {
	c, m, ok := strings.Cut(v, "/")
	cpu, err1 := strconv.ParseInt(strings.TrimSpace(c), 10, 64)
	mem, err2 := strconv.ParseInt(strings.TrimSpace(m), 10, 64)
	if !ok || err1 != nil || err2 != nil || cpu <= 0 || mem <= 0 {
		return Size{}, fmt.Errorf("%q is not a size: write cpu_millis/memory_gbs, both whole numbers above 0, like \"1000/4\"", v)
	}
	return Size{cpu, mem}, nil
}

// Table is a validated price file. Prices are in Currency; a missing price
// is reported as missing, never read as 0.
type Table struct {
	Currency      string
	EffectiveDate string
	// compute is per node and hour, by region and size.
	compute map[string]map[Size]float64
	// storage is per GB (storage_mb / 1024) and month, by region.
	storage map[string]float64
	// haReplica is the fraction of its primary's compute an HA replica costs.
	haReplica, pooler       float64
	hasHAReplica, hasPooler bool
}

// Compute returns the price of one node of size in region per hour.
func (t *Table) Compute(region string, size Size) (float64, bool) {
	p, ok := t.compute[region][size]
	return p, ok
}

// StorageGBMonth returns the price of a GB of storage in region per month.
func (t *Table) StorageGBMonth(region string) (float64, bool) {
	p, ok := t.storage[region]
	return p, ok
}

// HAReplica returns the fraction of its primary's compute an HA replica costs.
func (t *Table) HAReplica() (float64, bool) { return t.haReplica, t.hasHAReplica }

// Pooler returns the price of a connection pooler per hour.
func (t *Table) Pooler() (float64, bool) { return t.pooler, t.hasPooler }

// Load reads and validates the price file at path, reporting every problem.
func Load(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--pricing.file: %w", err)
	}
	return Parse(b)
}

var topKeys = []string{"currency", "effective_date", "compute", "storage_gb_month", "ha_replica", "pooler"}

// Parse validates a price file's content; each error names the key and the fix.
func Parse(b []byte) (*Table, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("--pricing.file: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("--pricing.file: the file is empty")
	}
	p := &parser{t: &Table{compute: map[string]map[Size]float64{}, storage: map[string]float64{}}}
	p.document(doc.Content[0])
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return p.t, nil
}

type parser struct {
	t    *Table
	errs []error
}

func (p *parser) errorf(path, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("--pricing.file: "+path+": "+format, args...))
}

func (p *parser) document(n *yaml.Node) {
	seen := p.mapping(n, "", "", func(key string, v *yaml.Node) {
		switch key {
		case "currency":
			p.t.Currency = p.text(v, key)
		case "effective_date":
			p.t.EffectiveDate = p.date(v, key)
		case "compute":
			p.computePrices(v)
		case "storage_gb_month":
			p.mapping(v, key, "give a price per region, like storage_gb_month: {us-east-1: 0.15}", func(region string, price *yaml.Node) {
				p.t.storage[region] = p.price(price, key+"."+region)
			})
		case "ha_replica":
			p.t.haReplica, p.t.hasHAReplica = p.price(v, key), true
		case "pooler":
			p.t.pooler, p.t.hasPooler = p.price(v, key), true
		default:
			p.errorf(key, "unknown key%s", config.Suggestion(key, topKeys))
		}
	})
	if seen == nil {
		return
	}
	for _, key := range []string{"currency", "effective_date"} {
		if !seen[key] {
			p.errorf(key, "missing: the file must say %s", map[string]string{
				"currency": "in which currency its prices are (currency: USD)", "effective_date": "from when its prices hold (effective_date: 2026-11-01)",
			}[key])
		}
	}
	if !seen["compute"] && !seen["storage_gb_month"] {
		p.errorf("compute", "missing: give compute or storage_gb_month prices, or the file prices nothing")
	}
}

func (p *parser) computePrices(n *yaml.Node) {
	p.mapping(n, "compute", `give a price per region and size, like compute: {us-east-1: {"1000/4": 0.09}}`, func(region string, sizes *yaml.Node) {
		where := "compute." + region
		prices := map[Size]float64{}
		p.t.compute[region] = prices
		p.mapping(sizes, where, `give a price per size, like `+region+`: {"1000/4": 0.09}`, func(key string, price *yaml.Node) {
			size, err := ParseSize(key)
			if err != nil {
				p.errorf(where+"."+strconv.Quote(key), "%v", err)
				return
			}
			if _, dup := prices[size]; dup {
				p.errorf(where+"."+strconv.Quote(key), "the size %s is given twice", size)
				return
			}
			prices[size] = p.price(price, where+"."+strconv.Quote(key))
		})
	})
}

// mapping calls each for every key of a mapping; nil when n is none, with
// fix (when not "") said after the error.
func (p *parser) mapping(n *yaml.Node, path, fix string, each func(key string, v *yaml.Node)) map[string]bool {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		where := path
		if where == "" {
			where = "(top level)"
		}
		if fix != "" {
			fix = ": " + fix
		}
		p.errorf(where, "%s is not a mapping of keys%s", config.Shown(n), fix)
		return nil
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		where := key
		if path != "" {
			where = path + "." + key
		}
		if seen[key] {
			p.errorf(where, "the key is given twice")
			continue
		}
		seen[key] = true
		each(key, n.Content[i+1])
	}
	return seen
}

func (p *parser) text(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || strings.TrimSpace(n.Value) == "" {
		p.errorf(path, "%s is not a non-empty string", config.Shown(n))
		return ""
	}
	return n.Value
}

func (p *parser) date(n *yaml.Node, path string) string {
	if n.Kind == yaml.ScalarNode {
		if _, err := time.Parse(time.DateOnly, n.Value); err == nil {
			return n.Value
		}
	}
	p.errorf(path, "%s is not a date: write it as YYYY-MM-DD, like 2026-11-01", config.Shown(n))
	return ""
}

// price reads a number at or above 0; a price of 0 is a price (a free tier).
func (p *parser) price(n *yaml.Node, path string) float64 {
	var v float64
	if n.Kind != yaml.ScalarNode || n.Tag == "!!str" || n.Decode(&v) != nil {
		p.errorf(path, "%s is not a number: write a price like 0.09", config.Shown(n))
		return 0
	}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		p.errorf(path, "%s is not a price: it must be a finite number at or above 0", config.Shown(n))
		return 0
	}
	return v
}
