package sessions_test

import (
	"testing"

	"github.com/otcgo/otc/sessions"
	"github.com/otcgo/otc/sessions/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(_ *testing.T, logSize int) sessions.Store {
		return sessions.NewMemoryStore(&sessions.MemoryOptions{LogSize: logSize})
	})
}
