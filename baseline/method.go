package baseline

import "fmt"

// Method names a baseline.
type Method int

const (
	// MethodMondrian is Mondrian k-anonymity (Mondrian).
	MethodMondrian Method = iota
	// MethodRREdge is randomized response at ε-edge privacy.
	MethodRREdge
	// MethodRRNode is randomized response at ε-node privacy.
	MethodRRNode
)

// String returns "mondrian", "rr_edge" or "rr_node".
func (m Method) String() string {
	switch m {
	case MethodMondrian:
		return "mondrian"
	case MethodRREdge:
		return Edge.Method()
	case MethodRRNode:
		return Node.Method()
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod parses "mondrian", "rr_edge" or "rr_node".
func ParseMethod(s string) (Method, error) {
	for _, m := range []Method{MethodMondrian, MethodRREdge, MethodRRNode} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("invalid baseline method %q (want mondrian, rr_edge or rr_node)", s)
}
