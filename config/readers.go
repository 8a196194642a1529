package config

import (
	"reflect"
	"time"
)

// Setting declares a per-project setting from the package that owns it, as a row
// of the table: Key "" for no file key, Check may be nil. Demo, for a bool, turns
// it on in the simulator's demo (--simulate) unless its flag or variable is given.
type Setting struct {
	Flag, Key, Help, Default string
	Field                    func(*API, *Collect) any
	Check                    func(p Project, v any) []string
	Demo                     bool
}

// AddSettings adds settings to the table; call it from an init, before flags are read.
func AddSettings(ss ...Setting) {
	if settingTree != nil {
		panic("config: AddSettings after the settings were read")
	}
	for _, s := range ss {
		settings = append(settings, setting{s.Flag, s.Key, s.Help, s.Default, s.Field, s.Check, s.Demo})
	}
}

// ReaderKey keeps a reader's settings, a T, in a Collect without a field of its own.
type ReaderKey[T any] struct{ name string }

// NewReaderKey returns the key of the settings of the reader called name.
func NewReaderKey[T any](name string) ReaderKey[T] { return ReaderKey[T]{name} }

// In returns c's settings of the reader for a Setting's Field, adding them if absent.
func (k ReaderKey[T]) In(c *Collect) *T {
	if v, ok := c.readers[k.name].(*T); ok {
		return v
	}
	if c.readers == nil {
		c.readers = map[string]any{}
	}
	v := new(T)
	c.readers[k.name] = v
	return v
}

// Field returns a Setting's Field for the setting f picks in the reader's settings.
func (k ReaderKey[T]) Field(f func(*T) any) func(*API, *Collect) any {
	return func(_ *API, c *Collect) any { return f(k.In(c)) }
}

// Of returns the reader's settings in c, zero when c has none.
func (k ReaderKey[T]) Of(c Collect) T {
	if v, ok := c.readers[k.name].(*T); ok {
		return *v
	}
	var zero T
	return zero
}

// clone copies the readers' settings: a file's project overrides its copy, not the flags'.
func (c Collect) clone() Collect {
	if c.readers == nil {
		return c
	}
	readers := make(map[string]any, len(c.readers))
	for name, v := range c.readers {
		p := reflect.New(reflect.TypeOf(v).Elem())
		p.Elem().Set(reflect.ValueOf(v).Elem())
		readers[name] = p.Interface()
	}
	c.readers = readers
	return c
}

// IfEnabled runs check only when on says the reader is enabled in p.
func IfEnabled(on func(p Project) bool, check func(p Project, v any) []string) func(p Project, v any) []string {
	return func(p Project, v any) []string {
		if !on(p) {
			return nil
		}
		return check(p, v)
	}
}

// SelectionSettings are the rows of a reader's Selection: --collect.<name>.environment
// and --collect.<name>.service-name-regex, checked when on says the reader is enabled;
// verb starts their help ("Read the usage of").
func SelectionSettings(name, verb string, sel func(*Collect) *Selection, on func(p Project) bool) []Setting {
	return []Setting{
		{Flag: "collect." + name + ".environment", Key: "collect." + name + ".environments",
			Help:  verb + " services of this environment (repeatable).",
			Field: func(_ *API, c *Collect) any { return &sel(c).Environments }, Check: IfEnabled(on, environments)},
		{Flag: "collect." + name + ".service-name-regex", Key: "collect." + name + ".service_name_regex",
			Help:  verb + " services whose name matches this anchored regex only.",
			Field: func(_ *API, c *Collect) any { return &sel(c).ServiceNameRegex }, Check: IfEnabled(on, nameRegex)},
	}
}

// AtLeastDataInterval checks a reader's interval against least (a hidden flag lowers it).
func AtLeastDataInterval(least time.Duration) func(p Project, v any) []string {
	return atLeastDataInterval(least)
}
