// Package figures draws the figures of a run directory: per metric the
// curves of a plan against the iteration (or a cumulative count), with
// ±1 standard error bands, and for every numeric parameter the curves vary
// the steady state against it on log-log axes with the fitted slopes. The
// styles (the Okabe–Ito palette, dash patterns, markers), the ticks and the
// text are chosen for print and screen; figure.go says how.
package figures
