package mcpwire

import "testing"

func TestVersions(t *testing.T) {
	if Lookup(V20260728) != Latest || !Latest.Stateless {
		t.Fatalf("the latest version is 2026-07-28, stateless")
	}
	if LatestSession.Stateless || LatestSession.Name != V20251125 {
		t.Fatalf("the latest version with sessions is 2025-11-25, not %q", LatestSession.Name)
	}
	if v := Lookup(V20250618); v == nil || v.Icons || v.Stateless {
		t.Fatalf("2025-06-18 has neither icons nor the stateless generation: %+v", v)
	}
	if Lookup("2024-10-07") != nil || Lookup("") != nil {
		t.Fatal("a version otc does not speak has no value")
	}
	for _, old := range []string{V20250326, V20241105} {
		if v := Lookup(old); v == nil || !v.ClientOnly || LookupServed(old) != nil {
			t.Fatalf("%s: the client speaks it, the server does not serve it", old)
		}
	}
	if got, want := Names(Served, "or"), "2026-07-28, 2025-11-25 or 2025-06-18"; got != want {
		t.Fatalf("Names(Served) = %q, want %q", got, want)
	}
	if got, want := Names(nil, "and"), "2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05"; got != want {
		t.Fatalf("Names = %q, want %q", got, want)
	}
}
