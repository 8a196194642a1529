package config

import (
	"reflect"
	"time"
)

// Setting declares a per-project setting from the package that owns it (a
// data-plane reader's file, through AddSettings), as a row of the settings
// table does: the flag and its derived environment variable, the key a
// file's project overrides it with ("" for none), its help and default,
// where its value is (Field) and what a wrong value is (Check, may be nil).
type Setting struct {
	Flag, Key, Help, Default string
	Field                    func(*API, *Collect) any
	Check                    func(p Project, v any) []string
}

// AddSettings adds settings to the table. It is called from a package's
// init, before the flags are registered or a file is read.
func AddSettings(ss ...Setting) {
	if settingTree != nil {
		panic("config: AddSettings after the settings were read")
	}
	for _, s := range ss {
		settings = append(settings, setting{s.Flag, s.Key, s.Help, s.Default, s.Field, s.Check})
	}
}

// ReaderKey is where a data-plane reader keeps its own settings, a T, in
// a Collect: a reader declared outside this package needs no field here.
type ReaderKey[T any] struct{ name string }

// NewReaderKey returns the key of the settings of the reader called name.
func NewReaderKey[T any](name string) ReaderKey[T] { return ReaderKey[T]{name} }

// In returns the reader's settings in c for the flags and a file to set
// (a Setting's Field), adding them when c has none.
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

// Of returns the reader's settings in c, zero when c has none.
func (k ReaderKey[T]) Of(c Collect) T {
	if v, ok := c.readers[k.name].(*T); ok {
		return *v
	}
	var zero T
	return zero
}

// clone returns c with its own copy of the readers' settings: a file's
// project overrides them in its copy, not in the flags'.
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

// AtLeastDataInterval checks a data-plane reader's interval against least
// (lowered by a hidden flag for whole-binary tests).
func AtLeastDataInterval(least time.Duration) func(p Project, v any) []string {
	return atLeastDataInterval(least)
}
