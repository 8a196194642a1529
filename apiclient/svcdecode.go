package apiclient

import (
	"bytes"
	"cmp"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// The walkers below decode a services-list element as encoding/json fills a Service, on JSON that
// skipValue checked. Each returns false, for its caller to decode the element through reflection,
// wherever encoding/json would do something else than the plain case: a key spelt in another case
// or escaped, a key met twice, a value of a type that fails (and makes the lenient path record it).

var (
	replicaSetFields  = []string{"id", "name", "status", "nodes", "cpu_millis", "memory_gbs", "endpoint", "connection_pooler", "metadata"}
	resourceFields    = []string{"id", "spec"}
	specFields        = []string{"cpu_millis", "memory_gbs", "volume_type"}
	endpointFields    = []string{"host", "port"}
	poolerFields      = []string{"endpoint"}
	metadataFields    = []string{"environment"}
	forkedFromFields  = []string{"project_id", "service_id", "is_standby"}
	metricsFields     = []string{"memory_mb", "storage_mb", "milli_cpu"}
	haFields          = []string{"replica_count", "sync_replica_count"}
	vpcEndpointFields = []string{"host", "port", "vpc_id"}
)

// serviceTexts are Service's text fields, found once by reflection: a text field added to Service
// is decoded and sanitized here without a line of its own.
var serviceTexts = textFieldsOf(reflect.TypeFor[Service]())

type textField struct {
	name   string
	offset uintptr
	secret bool
}

func textFieldsOf(t reflect.Type) []textField {
	var out []textField
	for i := range t.NumField() {
		f := t.Field(i)
		if name := jsonName(f); name != "" && f.Type.Kind() == reflect.String {
			out = append(out, textField{name, f.Offset, f.Type == secretType})
		}
	}
	return out
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !f.IsExported() || name == "-" {
		return ""
	}
	return cmp.Or(name, f.Name)
}

// textAt is the text field at offset in *v, an offset serviceTexts holds.
func textAt(v *Service, offset uintptr) *string {
	return (*string)(unsafe.Add(unsafe.Pointer(v), offset))
}

// serviceWalkers decode Service's other fields. A field of Service in neither list (one added
// since) sends its element through reflection.
var serviceWalkers = []struct {
	name string
	walk func(s *validJSON, v *Service) bool
}{
	{"created", func(s *validJSON, v *Service) bool { return s.time(&v.Created) }},
	{"paused", func(s *validJSON, v *Service) bool { return s.boolPtr(&v.Paused) }},
	{"resources", func(s *validJSON, v *Service) bool { return list(s, &v.Resources, (*validJSON).resource) }},
	{"metadata", func(s *validJSON, v *Service) bool { return pointer(s, &v.Metadata, (*validJSON).metadata) }},
	{"endpoint", func(s *validJSON, v *Service) bool { return pointer(s, &v.Endpoint, (*validJSON).endpoint) }},
	{"connection_pooler", func(s *validJSON, v *Service) bool { return pointer(s, &v.ConnectionPooler, (*validJSON).pooler) }},
	{"forked_from", func(s *validJSON, v *Service) bool { return pointer(s, &v.ForkedFrom, (*validJSON).forkedFrom) }},
	{"metrics", func(s *validJSON, v *Service) bool { return pointer(s, &v.Metrics, (*validJSON).serviceMetrics) }},
	{"ha_replicas", func(s *validJSON, v *Service) bool { return pointer(s, &v.HAReplicas, (*validJSON).haReplicas) }},
	{"vpc_endpoint", func(s *validJSON, v *Service) bool { return pointer(s, &v.VPCEndpoint, (*validJSON).vpcEndpoint) }},
	{"vpcEndpoint", func(s *validJSON, v *Service) bool {
		return pointer(s, &v.VPCEndpointDeprecated, (*validJSON).vpcEndpoint)
	}},
	{"read_replica_sets", func(s *validJSON, v *Service) bool { return list(s, &v.ReadReplicaSets, (*validJSON).replicaSet) }},
}

// serviceFields lists the texts, then the walkers, then every other field of Service.
var serviceFields = func() []string {
	var names []string
	for _, f := range serviceTexts {
		names = append(names, f.name)
	}
	for _, w := range serviceWalkers {
		names = append(names, w.name)
	}
	t := reflect.TypeFor[Service]()
	for i := range t.NumField() {
		if name := jsonName(t.Field(i)); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}()

func (s *validJSON) service(v *Service) bool {
	return s.object(serviceFields, func(f int) bool {
		switch w := f - len(serviceTexts); {
		case f < len(serviceTexts):
			return s.text(textAt(v, serviceTexts[f].offset))
		case w < len(serviceWalkers):
			return serviceWalkers[w].walk(s, v)
		}
		return false
	})
}

func (s *validJSON) replicaSet(v *ReplicaSet) bool {
	return s.object(replicaSetFields, func(f int) bool {
		switch f {
		case 0, 1, 2:
			return s.text([]*string{&v.ID, &v.Name, &v.Status}[f])
		case 3, 4, 5:
			return s.integer([]*Int{&v.Nodes, &v.CPUMillis, &v.MemoryGBs}[f-3])
		case 6:
			return pointer(s, &v.Endpoint, (*validJSON).endpoint)
		case 7:
			return pointer(s, &v.ConnectionPooler, (*validJSON).pooler)
		}
		return pointer(s, &v.Metadata, (*validJSON).metadata)
	})
}

func (s *validJSON) resource(v *Resource) bool {
	return s.object(resourceFields, func(f int) bool {
		if f == 0 {
			return s.text(&v.ID)
		}
		return pointer(s, &v.Spec, (*validJSON).spec)
	})
}

func (s *validJSON) spec(v *ResourceSpec) bool {
	return s.object(specFields, func(f int) bool {
		if f == 2 {
			return s.text(&v.VolumeType)
		}
		return s.intPtr([]**Int{&v.CPUMillis, &v.MemoryGBs}[f])
	})
}

func (s *validJSON) endpoint(v *Endpoint) bool {
	return s.object(endpointFields, func(f int) bool {
		if f == 0 {
			return s.text(&v.Host)
		}
		return s.integer(&v.Port)
	})
}

func (s *validJSON) pooler(v *ConnectionPooler) bool {
	return s.object(poolerFields, func(int) bool { return pointer(s, &v.Endpoint, (*validJSON).endpoint) })
}

func (s *validJSON) metadata(v *Metadata) bool {
	return s.object(metadataFields, func(int) bool { return s.text(&v.Environment) })
}

func (s *validJSON) forkedFrom(v *ForkedFrom) bool {
	return s.object(forkedFromFields, func(f int) bool {
		if f == 2 {
			return s.boolean(&v.IsStandby)
		}
		return s.text([]*string{&v.ProjectID, &v.ServiceID}[f])
	})
}

func (s *validJSON) serviceMetrics(v *ServiceMetrics) bool {
	return s.object(metricsFields, func(f int) bool {
		return s.intPtr([]**Int{&v.MemoryMB, &v.StorageMB, &v.MilliCPU}[f])
	})
}

func (s *validJSON) haReplicas(v *HAReplicas) bool {
	return s.object(haFields, func(f int) bool {
		return s.intPtr([]**Int{&v.ReplicaCount, &v.SyncReplicaCount}[f])
	})
}

func (s *validJSON) vpcEndpoint(v *VPCEndpoint) bool {
	return s.object(vpcEndpointFields, func(f int) bool {
		switch f {
		case 0:
			return s.text(&v.Host)
		case 1:
			return s.integer(&v.Port)
		}
		return s.text(&v.VPCID)
	})
}

// object walks an object's members, handing each known field's index to field with s at its value.
func (s *validJSON) object(names []string, field func(int) bool) bool {
	if s.next() != '{' {
		return false
	}
	s.i++
	var seen uint64
	for s.more() {
		q := s.key()
		f, ok := fieldIndex(names, q[1:len(q)-1])
		switch {
		case !ok:
			return false
		case f < 0:
			s.value()
		case seen&(1<<f) != 0:
			return false
		default:
			seen |= 1 << f
			if !field(f) {
				return false
			}
		}
	}
	return true
}

// fieldIndex is the index of the name k spells exactly, -1 for none; false where encoding/json could
// still match it (another case, an escape).
func fieldIndex(names []string, k []byte) (int, bool) {
	for i, n := range names {
		if string(k) == n {
			return i, true
		}
	}
	if bytes.IndexByte(k, '\\') >= 0 {
		return 0, false
	}
	for _, n := range names {
		if bytes.EqualFold(k, []byte(n)) {
			return 0, false
		}
	}
	return -1, true
}

// pointer decodes a nullable object: null leaves nil, as encoding/json does on a fresh value.
func pointer[T any](s *validJSON, p **T, decode func(*validJSON, *T) bool) bool {
	if s.next() == 'n' {
		s.value()
		return true
	}
	v := new(T)
	*p = v
	return decode(s, v)
}

// list decodes an array of objects: null leaves nil, [] is empty but not nil, a null element is zero.
func list[T any](s *validJSON, p *[]T, decode func(*validJSON, *T) bool) bool {
	null, ok := s.openList()
	if !ok || null {
		return ok
	}
	var buf [4]T
	items := buf[:0]
	for s.more() {
		var e T
		if s.next() == 'n' {
			s.value()
		} else if !decode(s, &e) {
			return false
		}
		items = append(items, e)
	}
	*p = append(make([]T, 0, len(items)), items...)
	return true
}

func (s *validJSON) text(p *string) bool {
	switch s.next() {
	case 'n':
		s.value()
		return true
	case '"':
		*p = unquote(s.value())
		return true
	}
	return false
}

func (s *validJSON) boolean(p *bool) bool {
	switch s.next() {
	case 'n':
	case 't':
		*p = true
	case 'f':
		*p = false
	default:
		return false
	}
	s.value()
	return true
}

func (s *validJSON) boolPtr(p **bool) bool {
	if c := s.next(); c == 't' || c == 'f' {
		b := c == 't'
		*p = &b
	} else if c != 'n' {
		return false
	}
	s.value()
	return true
}

func (s *validJSON) integer(p *Int) bool {
	raw := s.value()
	if n, ok := plainInt(raw); ok {
		*p = n
		return true
	}
	return p.UnmarshalJSON(raw) == nil
}

func (s *validJSON) intPtr(p **Int) bool {
	if s.next() == 'n' {
		s.value()
		return true
	}
	v := new(Int)
	*p = v
	return s.integer(v)
}

// plainInt reads the digits of a number with at most 18 of them, which Int.UnmarshalJSON parses alike.
func plainInt(b []byte) (Int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return Int(n), true
}

// time decodes as Time.UnmarshalJSON does; false where it fails.
func (s *validJSON) time(p *Time) bool {
	raw := s.value()
	switch raw[0] {
	case 'n':
		return true
	case '"':
	default:
		return false
	}
	if c := raw[1 : len(raw)-1]; bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
		return parseTimeInto(p, string(c)) // on the stack: no allocation
	}
	return parseTimeInto(p, unquote(raw))
}

func parseTimeInto(p *Time, text string) bool {
	if strings.TrimSpace(text) == "" {
		return true
	}
	t, err := ParseTime(text)
	if err != nil {
		return false
	}
	p.Time = t
	return true
}

// sanitize is sanitize(v, red, cut) without reflection, the texts of a service taken in turn;
// TestServiceSanitizeMatchesReflection holds it to the reflective walk, new fields included.
func (v *Service) sanitize(red *Redactor, cut func()) {
	for _, f := range serviceTexts {
		if !f.secret {
			sanitizeInPlace(textAt(v, f.offset), red, cut)
		}
	}
	for i := range v.Resources {
		sanitizeInPlace(&v.Resources[i].ID, red, cut)
		if v.Resources[i].Spec != nil {
			sanitizeInPlace(&v.Resources[i].Spec.VolumeType, red, cut)
		}
	}
	sanitizeMetadata(v.Metadata, red, cut)
	sanitizeEndpoint(v.Endpoint, red, cut)
	sanitizePooler(v.ConnectionPooler, red, cut)
	if v.ForkedFrom != nil {
		sanitizeInPlace(&v.ForkedFrom.ProjectID, red, cut)
		sanitizeInPlace(&v.ForkedFrom.ServiceID, red, cut)
	}
	for _, e := range []*VPCEndpoint{v.VPCEndpoint, v.VPCEndpointDeprecated} {
		if e != nil {
			sanitizeInPlace(&e.Host, red, cut)
			sanitizeInPlace(&e.VPCID, red, cut)
		}
	}
	for i := range v.ReadReplicaSets {
		r := &v.ReadReplicaSets[i]
		for _, p := range []*string{&r.ID, &r.Name, &r.Status} {
			sanitizeInPlace(p, red, cut)
		}
		sanitizeEndpoint(r.Endpoint, red, cut)
		sanitizePooler(r.ConnectionPooler, red, cut)
		sanitizeMetadata(r.Metadata, red, cut)
		sanitizeDropped(r.Dropped, red, cut)
	}
	sanitizeDropped(v.Dropped, red, cut)
}

func sanitizeInPlace(p *string, red *Redactor, cut func()) {
	if s := sanitizeText(*p, red, cut); s != *p {
		*p = s
	}
}

func sanitizeMetadata(m *Metadata, red *Redactor, cut func()) {
	if m != nil {
		sanitizeInPlace(&m.Environment, red, cut)
	}
}

func sanitizeEndpoint(e *Endpoint, red *Redactor, cut func()) {
	if e != nil {
		sanitizeInPlace(&e.Host, red, cut)
	}
}

func sanitizePooler(p *ConnectionPooler, red *Redactor, cut func()) {
	if p != nil {
		sanitizeEndpoint(p.Endpoint, red, cut)
	}
}

func sanitizeDropped(dropped []FieldError, red *Redactor, cut func()) {
	for i := range dropped {
		sanitizeInPlace(&dropped[i].Field, red, cut)
		sanitizeInPlace(&dropped[i].Err, red, cut)
	}
}
