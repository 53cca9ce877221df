package fedplt

import (
	"errors"

	"maple/internal/params"
)

// Shift returns the curvature c the method adds to f_i in its local problems
// (see DefaultStep): 1/ρ for Fed-PLT, 1/η for FedPD, τ − μ/N for 5GCS and 0
// for the gradient-corrected methods.
func (c *Config) Shift() float64 {
	switch c.Method {
	case PLT:
		return 1 / c.Rho
	case FedPD:
		return 1 / c.FedPDEta
	case FiveGCS:
		return c.FiveGCS.Tau - c.FiveGCS.Mu/float64(c.Agents)
	}
	return 0
}

// Resolve returns a copy of c whose solvers all have explicit steps: a
// solver without one (Solver.Step and its rule's step both 0) takes its
// rule's step scale (0 meaning 1) times its DefaultStep on the local
// problem of the global moduli m (the paper's γ⋆ for Fed-PLT). It refuses a
// step above the solver's stability bound, a 5GCS subproblem that is not
// strongly convex, and what a solver's Check refuses on this problem (an
// accelerated solver without strong convexity, an SGD batch larger than an
// agent's data set of sizes[i] samples), naming the field.
func (c Config) Resolve(m Moduli, sizes []int) (Config, error) {
	shift := c.Shift()
	if c.Method == FiveGCS && m.Low+shift <= 0 {
		return c, fieldErr("5gcs.tau", "the local problems F_m + (τ/2)‖·‖² must be strongly convex: need τ > μ/N − λ̲ = %.6g, got %v", c.FiveGCS.Mu/float64(c.Agents)-m.Low, c.FiveGCS.Tau)
	}
	k := Moduli{Low: m.Low + shift, High: m.High + shift}
	solvers := make([]Solver, len(c.Solvers))
	for i, s := range c.Solvers {
		if ch, ok := s.Rule.(Checker); ok {
			var pe *params.Error
			if err := ch.Check(k, sizes[i]); errors.As(err, &pe) {
				return c, fieldErr(SolverField(i, pe.Param), "%s", pe.Msg)
			} else if err != nil {
				return c, fieldErr(SolverField(i, "kind"), "%v", err)
			}
		}
		field := "step"
		if s.Step == 0 {
			st := s.Rule.Steps()
			s.Step = st.Step
			if s.Step == 0 {
				scale := st.Scale
				if scale == 0 {
					scale = 1
				}
				s.Step, field = scale*s.Rule.DefaultStep(k), "step_scale"
			}
		}
		if bound, strict := s.Rule.StepBound(k); s.Step > bound || (strict && s.Step == bound) {
			rel := "≤"
			if strict {
				rel = "<"
			}
			return c, fieldErr(SolverField(i, field), "step %.6g is above the stability bound of %s on this problem: need γ %s %.6g (λ̄ = %.6g, curvature shift %.6g)", s.Step, s.Name, rel, bound, m.High, shift)
		}
		solvers[i] = s
	}
	c.Solvers = solvers
	return c, nil
}
