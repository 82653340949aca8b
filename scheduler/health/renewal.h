#pragma once
// The exact expected ETTR of a job that saves every tau seconds of work (issue 45), beside the
// first-order one of goodput.h. With failures at a constant rate 1/M (exponential), a save that
// blocks C seconds and a restart of R seconds after each failure (during which the job may fail
// again), one interval of tau seconds of work takes, on average (a renewal argument; Daly 2006):
//   E[T] = M e^(R/M) (e^((tau + C)/M) - 1)
// and the ETTR is tau / E[T]. Without failures (M -> infinity) it is tau / (tau + C), which the
// first-order 1 - C/tau - (tau/2 + R)/M understates (0.600 for 0.714 at C = 0.4 tau). The best
// interval solves tau / M = 1 - e^(-(tau + C)/M); it is Young's sqrt(2 C M) to first order and
// a little shorter as C/M grows.

namespace orch {

// In [0, 1]. M infinite: tau / (tau + C) (1 with no saves or free ones). M not above 0: 0.
// tau infinite (never saves): 0 with failures, 1 without. A free save (C = 0) with tau = 0
// (taken continuously): e^(-R/M), only the restarts are lost. C > 0 with tau not above 0: 0.
double renewal_ettr(double checkpoint_cost_s, double interval_s, double restart_s, double mtbf_s);

// The interval that maximises renewal_ettr for this cost and MTBF (it does not depend on R).
// 0 when the cost or the MTBF is not positive; infinite for an infinite MTBF.
double renewal_interval_s(double checkpoint_cost_s, double mtbf_s);

}  // namespace orch
