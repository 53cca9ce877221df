package msg

import "maple/privacy/pairmask"

// MaskRoleOf returns the wire form of a local graph-homomorphic role
// (MASK_ROLE_UNSPECIFIED for a value that is not a role).
func MaskRoleOf(r pairmask.Role) MaskRole {
	switch r {
	case pairmask.Plus:
		return MaskRole_MASK_ROLE_PLUS
	case pairmask.Minus:
		return MaskRole_MASK_ROLE_MINUS
	case pairmask.Unmasked:
		return MaskRole_MASK_ROLE_UNMASKED
	}
	return MaskRole_MASK_ROLE_UNSPECIFIED
}

// Pairmask maps a wire role back; an unknown value becomes an invalid
// pairmask.Role, which the state machines reject.
func (r MaskRole) Pairmask() pairmask.Role {
	switch r {
	case MaskRole_MASK_ROLE_PLUS:
		return pairmask.Plus
	case MaskRole_MASK_ROLE_MINUS:
		return pairmask.Minus
	case MaskRole_MASK_ROLE_UNMASKED:
		return pairmask.Unmasked
	}
	return pairmask.Role(2) // not a Role: the state machine rejects it
}
