//! The heuristic H that ranks the candidate tasks at each step of the search: the candidate
//! with the smallest H is planned next.
//!
//! Owns the heuristics and their names. Each is a pure function of the candidate's deadline,
//! earliest start time (EST) and planned duration; none sees the plan.

use std::fmt;

/// What a heuristic sees of a candidate: instants and spans in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    /// The task's (effective) deadline.
    pub deadline: u64,
    /// Its earliest start time on the CPU placement chose.
    pub est: u64,
    /// How long it occupies that CPU (switch included).
    pub duration: u64,
}

/// A heuristic by name; smaller H is better.
///
/// ```
/// use tempi::policy::admit::planner::Heuristic;
/// assert_eq!(Heuristic::by_name("min-d"), Some(Heuristic::MinD));
/// assert_eq!(Heuristic::by_name("est"), Some(Heuristic::MinS));
/// assert_eq!(Heuristic::by_name("d+w*est").unwrap().name(), "d+w*est");
/// assert!(Heuristic::by_name("fastest").is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heuristic {
    /// `H = d`: earliest deadline first.
    MinD,
    /// `H = EST`: earliest start first.
    MinS,
    /// `H = d − (EST + C)`: least laxity first.
    MinL,
    /// `H = d + W·EST`, `W = weight_milli / 1000`.
    DPlusWEst {
        /// The weight W in thousandths.
        weight_milli: u64,
    },
}

impl Heuristic {
    /// The names [`by_name`](Heuristic::by_name) knows (`est` is another name for `min-s`).
    ///
    /// ```
    /// assert_eq!(tempi::policy::admit::planner::Heuristic::NAMES.len(), 5);
    /// ```
    pub const NAMES: [&'static str; 5] = ["min-d", "min-s", "est", "min-l", "d+w*est"];

    /// The heuristic called `name`; `d+w*est` gets W = 1 (change it with
    /// [`with_weight_milli`](Heuristic::with_weight_milli)).
    ///
    /// ```
    /// use tempi::policy::admit::planner::Heuristic;
    /// assert_eq!(Heuristic::by_name("min-l"), Some(Heuristic::MinL));
    /// ```
    pub fn by_name(name: &str) -> Option<Heuristic> {
        match name {
            "min-d" => Some(Heuristic::MinD),
            "min-s" | "est" => Some(Heuristic::MinS),
            "min-l" => Some(Heuristic::MinL),
            "d+w*est" => Some(Heuristic::DPlusWEst { weight_milli: 1000 }),
            _ => None,
        }
    }

    /// The same heuristic with W set to `weight_milli / 1000` (only `d+w*est` has a weight).
    ///
    /// ```
    /// use tempi::policy::admit::planner::Heuristic;
    /// let h = Heuristic::by_name("d+w*est").unwrap().with_weight_milli(2500);
    /// assert_eq!(h, Heuristic::DPlusWEst { weight_milli: 2500 });
    /// assert_eq!(Heuristic::MinD.with_weight_milli(2500), Heuristic::MinD);
    /// ```
    pub fn with_weight_milli(self, weight_milli: u64) -> Heuristic {
        match self {
            Heuristic::DPlusWEst { .. } => Heuristic::DPlusWEst { weight_milli },
            other => other,
        }
    }

    /// The heuristic's canonical name.
    ///
    /// ```
    /// assert_eq!(tempi::policy::admit::planner::Heuristic::MinS.name(), "min-s");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Heuristic::MinD => "min-d",
            Heuristic::MinS => "min-s",
            Heuristic::MinL => "min-l",
            Heuristic::DPlusWEst { .. } => "d+w*est",
        }
    }

    /// H of one candidate. Computed in `i128` so no sum or product overflows.
    pub(super) fn score(self, c: Candidate) -> i128 {
        match self {
            Heuristic::MinD => min_d(c),
            Heuristic::MinS => min_s(c),
            Heuristic::MinL => min_l(c),
            Heuristic::DPlusWEst { weight_milli } => d_plus_w_est(c, weight_milli),
        }
    }
}

impl fmt::Display for Heuristic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Heuristic::DPlusWEst { weight_milli } => write!(f, "d+w*est (W = {})", *weight_milli as f64 / 1000.0),
            other => f.write_str(other.name()),
        }
    }
}

fn min_d(c: Candidate) -> i128 {
    i128::from(c.deadline)
}

fn min_s(c: Candidate) -> i128 {
    i128::from(c.est)
}

fn min_l(c: Candidate) -> i128 {
    i128::from(c.deadline) - i128::from(c.est) - i128::from(c.duration)
}

/// Scaled by 1000 throughout so W keeps its thousandths without rounding.
fn d_plus_w_est(c: Candidate, weight_milli: u64) -> i128 {
    i128::from(c.deadline) * 1000 + i128::from(weight_milli) * i128::from(c.est)
}
