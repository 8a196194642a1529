package apiclient

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkDecodeServices measures the decoding of a services list with
// its sanitizing (redaction of every text), what each poll cycle pays.
func BenchmarkDecodeServices(b *testing.B) {
	b.Run("N=10000", func(b *testing.B) { benchmarkDecodeServices(b, 10000) })
}

func benchmarkDecodeServices(b *testing.B, n int) {
	var buf bytes.Buffer
	buf.WriteString("[")
	for i := range n {
		if i > 0 {
			buf.WriteString(",")
		}
		fmt.Fprintf(&buf, `{"service_id":"svc-%08d","project_id":"proj-abcdefgh","name":"service number %d of the fleet","region_code":"us-east-1","service_type":"TIMESCALEDB","status":"READY","created":"2024-01-01T00:00:00Z","resources":[{"id":"res-%d","spec":{"cpu_millis":1000,"memory_gbs":4,"volume_type":"gp3"}}],"metadata":{"environment":"PROD"},"endpoint":{"host":"svc-%d.abcdefgh.tsdb.cloud.example.com","port":5432}}`, i, i, i, i)
	}
	buf.WriteString("]")
	red := newRedactor("AKIAEXAMPLE42", "s3cr3t/Key+with=Symbols", "bearer-api-key-0123456789")
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		var out []Service
		if err := decodeStream("x", bytes.NewReader(buf.Bytes()), &out, func(FieldError) {}, red, func() ([]byte, bool) { return nil, false }, streamOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
