package config

import (
	"reflect"
	"time"
)

// Setting declares a per-project setting from the package that owns it, as a row
// of the table: Key "" for no file key, Check may be nil.
type Setting struct {
	Flag, Key, Help, Default string
	Field                    func(*API, *Collect) any
	Check                    func(p Project, v any) []string
}

// AddSettings adds settings to the table; call it from an init, before flags are read.
func AddSettings(ss ...Setting) {
	if settingTree != nil {
		panic("config: AddSettings after the settings were read")
	}
	for _, s := range ss {
		settings = append(settings, setting{s.Flag, s.Key, s.Help, s.Default, s.Field, s.Check})
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

// AtLeastDataInterval checks a reader's interval against least (a hidden flag lowers it).
func AtLeastDataInterval(least time.Duration) func(p Project, v any) []string {
	return atLeastDataInterval(least)
}
