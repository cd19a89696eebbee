package otc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseToolID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id      string
		key     string
		version string
		ok      bool
	}{
		// SPEC §5.
		{"Calculator.Add@1.0.0", "Calculator.Add", "1.0.0", true},
		{"Calculator.Add@1", "Calculator.Add", "1.0.0", true},
		{"Calculator.Add@0", "Calculator.Add", "0.0.0", true},
		{"Calculator.Add@10", "Calculator.Add", "10.0.0", true},
		{"Calculator.Add", "Calculator.Add", "", true},
		{"a_1.B_2@0.10.200", "a_1.B_2", "0.10.200", true},
		{"_._", "_._", "", true},
		{"Calculator.Add@1.0", "", "", false},
		{"Calculator.Add@v1", "", "", false},
		{"Calculator.Add@1.0.0-beta", "", "", false},
		{"Calculator.Add@1.0.0+build", "", "", false},
		{"Calculator.Add@latest", "", "", false},
		{"Calculator.Add@", "", "", false},
		{"Calculator.Add@@1", "", "", false},
		{"Calculator.Add@1@1", "", "", false},
		{"Calculator.Add@01", "", "", false},
		{"Calculator.Add@1.00.0", "", "", false},
		{"Calculator.Add@1.0.0.0", "", "", false},
		{"Calculator.Add@.1.0", "", "", false},
		{"Calculator.Add@1..0", "", "", false},
		{"Calculator.Add@-1", "", "", false},
		{"Calculator.Add@+1", "", "", false},
		{"Calculator.Add@１", "", "", false}, // fullwidth digit
		{"Calculator.", "", "", false},
		{".Add", "", "", false},
		{".", "", "", false},
		{"", "", "", false},
		{"@1.0.0", "", "", false},
		{"Calculator", "", "", false},
		{"Calculator.Add.Sub", "", "", false},
		{"Calculator-x.Add", "", "", false},
		{"Calculator.Add ", "", "", false},
		{"Calculator.Ädd", "", "", false},
		{"Calculator\x00.Add", "", "", false},
		{"Calculator." + strings.Repeat("A", 245), "Calculator." + strings.Repeat("A", 245), "", true}, // 256 bytes
		{"Calculator." + strings.Repeat("A", 246), "", "", false},                                      // 257 bytes
		{"Calculator." + strings.Repeat("A", 239) + "@1.0.0", "Calculator." + strings.Repeat("A", 239), "1.0.0", true},
		{"Calculator." + strings.Repeat("A", 240) + "@1.0.0", "", "", false},
	}
	for _, tt := range tests {
		name := tt.id
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			key, version, ok := parseToolID(tt.id)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.key, key)
			assert.Equal(t, tt.version, version)
			if ok && version != "" {
				assert.True(t, isVersion(version), "a parsed version must be a full x.y.z")
			}
		})
	}
}

func TestIsVersion(t *testing.T) {
	t.Parallel()
	valid := []string{"0.0.0", "1.0.0", "10.20.30", "1.10.0", "0.0.1", "99999999999999999999.0.0"}
	invalid := []string{
		"", "1", "1.0", "1.0.0.0", "v1.0.0", "1.0.0-beta", "1.0.0+build", "01.0.0", "1.01.0", "1.0.01",
		"00.0.0", ".0.0", "1..0", "1.0.", "1.0.0.", " 1.0.0", "1.0.0 ", "1. 0.0", "-1.0.0", "+1.0.0",
		"1.0.x", "a.b.c", "１.0.0", "1.0.0\n", "1_0.0.0", "1e3.0.0", "0x1.0.0",
	}
	for _, v := range valid {
		assert.True(t, isVersion(v), "%q", v)
	}
	for _, v := range invalid {
		assert.False(t, isVersion(v), "%q", v)
	}
}

func TestIsNumber(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "1", "9", "10", "123456789012345678901234567890"} {
		assert.True(t, isNumber(s), "%q", s)
	}
	for _, s := range []string{"", "00", "01", "007", "-1", "+1", "1.0", "1e3", " 1", "1 ", "a", "١", "１", "0x1", "\x00"} {
		assert.False(t, isNumber(s), "%q", s)
	}
}

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0},
		{"1.0.0", "2.0.0", -1},
		{"9.0.0", "10.0.0", -1},
		{"1.9.0", "1.10.0", -1},
		{"1.0.9", "1.0.10", -1},
		{"2.0.0", "1.99.99", 1},
		{"0.0.1", "0.0.0", 1},
		{"99999999999999999999.0.0", "100000000000000000000.0.0", -1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, compareVersions(tt.a, tt.b), "%s vs %s", tt.a, tt.b)
		assert.Equal(t, -tt.want, compareVersions(tt.b, tt.a), "%s vs %s", tt.b, tt.a)
	}
}

func TestSupportedSchema(t *testing.T) {
	t.Parallel()
	// SPEC §2: exactly these three spellings.
	for _, s := range []string{"otc://1.0", "urn:oxp:1.0", "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/1.0/openapi.json"} {
		assert.True(t, supportedSchema(s), s)
	}
	for _, s := range []string{"", "otc://1.1", "otc://2.0", "OTC://1.0", "urn:oxp:1", "otc://1.0 ", "urn:oxp:1.0/", "otc://1"} {
		assert.False(t, supportedSchema(s), s)
	}
}
