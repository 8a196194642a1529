package flagval

import (
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

func TestErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--d=soon"}, `--d ($T_D): "soon" is not a duration`},
		{[]string{"--i=x"}, `--i: "x" is not an integer`},
		{[]string{"--f=x"}, `--f: "x" is not a number`},
		{[]string{"--e=xml"}, `--e: "xml" is not one of a, b`},
	} {
		app := kingpin.New("t", "")
		var d time.Duration
		var i int
		var f float64
		var e string
		Duration(app, "d", "", "1s", "T_D", &d)
		Int(app, "i", "", "1", "", &i)
		Float(app, "f", "", "1", "", &f)
		Enum(app, "e", "", "a", "", &e, "a", "b")
		_, err := app.Parse(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	app := kingpin.New("t", "")
	var d time.Duration
	var e string
	Duration(app, "d", "", "1s", "", &d)
	Enum(app, "e", "", "a", "", &e, "a", "b")
	if _, err := app.Parse([]string{"--e=b"}); err != nil || d != time.Second || e != "b" {
		t.Errorf("defaults and values: %v %v %q", err, d, e)
	}
}
