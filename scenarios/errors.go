package scenarios

import (
	"errors"
	"fmt"
)

// Error is a problem with a scenario: the file (or command-line override) it
// comes from, the line, the dotted field path and what was expected. It prints
// as one line, for example
//
//	fig4.yaml:12: algorithm.step_size: must be positive, got -0.1
type Error struct {
	// File is the scenario's name; Origin, when set, replaces File and Line
	// for values that came from a --set override.
	File   string
	Origin string
	// Line is the line of the offending value, 0 when unknown.
	Line int
	// Field is the dotted path of the offending field (empty for file-level
	// problems such as malformed YAML).
	Field string
	// Msg says what is wrong and what was expected.
	Msg string
}

// Error implements error.
func (e *Error) Error() string {
	where := e.File
	switch {
	case e.Origin != "":
		where = e.Origin
	case e.Line > 0:
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return where + ": " + e.Msg
	}
	return where + ": " + e.Field + ": " + e.Msg
}

// IsUserError reports whether err is a problem with the user's input (a
// scenario, an override, a file it names) rather than a failure of maple.
func IsUserError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
