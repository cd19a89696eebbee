package primitive

import (
	"context"

	"github.com/otcgo/otc"
)

// ToolPair is the pair of tools that serve a registry's entries of one
// kind (resources, prompts) to the callers whose format has tools only:
// Kit.List, which lists the entries the caller may see, and Kit.<Get>,
// which reads or renders one. Both are read-only and touch nothing
// outside the server.
type ToolPair[L, In, Out any] struct {
	Kit, Get                        string
	Policy                          *otc.Policy
	ListDescription, GetDescription string
	// List answers the list tool from the registry's entries as they are,
	// admits being the check of an entry's policy for the caller.
	List func(sn *Snapshot, admits func(Admits) bool) L
	// Read answers the other tool.
	Read func(ctx context.Context, sn *Snapshot, admits func(Admits) bool, in In) (Out, error)
}

// Register registers the pair on reg. It fails as otc.Register does, for
// a toolkit taken already, say.
func (p ToolPair[L, In, Out]) Register(reg *otc.Registry) error {
	note := &otc.ToolAnnotations{ReadOnlyHint: new(true), OpenWorldHint: new(false)}
	err := otc.Register(reg, otc.Tool{ID: p.Kit + ".List", Version: "1.0.0", Policy: p.Policy, Description: p.ListDescription, Annotations: note},
		func(ctx context.Context, _ struct{}) (L, error) {
			return p.List(Current(reg), Admitted(ctx)), nil
		})
	if err != nil {
		return err
	}
	return otc.Register(reg, otc.Tool{ID: p.Kit + "." + p.Get, Version: "1.0.0", Policy: p.Policy, Description: p.GetDescription, Annotations: note},
		func(ctx context.Context, in In) (Out, error) {
			return p.Read(ctx, Current(reg), Admitted(ctx), in)
		})
}

// Admitted is the check of an entry's policy for the caller of ctx,
// through the protocol its call came through.
func Admitted(ctx context.Context) func(Admits) bool {
	protocol := seam.Protocol(ctx)
	return func(a Admits) bool { return a(ctx, protocol) }
}
