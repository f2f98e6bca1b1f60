//! Placement: which CPU a thread goes to when the search plans its first task. Every later
//! task of the thread follows it there (no migration).
//!
//! Owns the placement rules and their names, as pure functions of each CPU's earliest start
//! time for the task and the thread's home CPU. It never sees the plan.

/// A placement rule by name.
///
/// ```
/// use tempi::policy::admit::planner::Placement;
/// assert_eq!(Placement::by_name("earliest"), Some(Placement::Earliest));
/// assert_eq!(Placement::by_name("only-local"), Some(Placement::OnlyLocal));
/// assert_eq!(Placement::default(), Placement::Earliest);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// The CPU where the task can start earliest; on a tie the thread's home CPU, then the
    /// lowest-numbered CPU. The home CPU is thus taken whenever it is free by the time the
    /// task could start anywhere.
    #[default]
    Earliest,
    /// The thread's home CPU whenever it has one, however late; otherwise as `Earliest`.
    OnlyLocal,
}

impl Placement {
    /// The names [`by_name`](Placement::by_name) knows.
    ///
    /// ```
    /// assert_eq!(tempi::policy::admit::planner::Placement::NAMES, ["earliest", "only-local"]);
    /// ```
    pub const NAMES: [&'static str; 2] = ["earliest", "only-local"];

    /// The rule called `name`.
    ///
    /// ```
    /// assert!(tempi::policy::admit::planner::Placement::by_name("random").is_none());
    /// ```
    pub fn by_name(name: &str) -> Option<Placement> {
        match name {
            "earliest" => Some(Placement::Earliest),
            "only-local" => Some(Placement::OnlyLocal),
            _ => None,
        }
    }

    /// The rule's name.
    ///
    /// ```
    /// assert_eq!(tempi::policy::admit::planner::Placement::OnlyLocal.name(), "only-local");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Placement::Earliest => "earliest",
            Placement::OnlyLocal => "only-local",
        }
    }

    /// The CPU for a thread's first task among `cpus` CPUs, given the task's earliest start
    /// on each (`est_on`) and the thread's home CPU.
    pub(super) fn choose(self, cpus: usize, home: Option<usize>, est_on: impl Fn(usize) -> u64) -> usize {
        match (self, home) {
            (Placement::OnlyLocal, Some(h)) => h,
            _ => earliest(cpus, home, est_on),
        }
    }
}

fn earliest(cpus: usize, home: Option<usize>, est_on: impl Fn(usize) -> u64) -> usize {
    let mut best = home.unwrap_or(0);
    let mut best_est = est_on(best);
    for cpu in 0..cpus {
        let est = est_on(cpu);
        // Strictly earlier wins; on a tie the home CPU keeps its place, else the lower index.
        if est < best_est || (est == best_est && Some(best) != home && cpu < best) {
            best = cpu;
            best_est = est;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_prefers_home_on_ties_then_low_index() {
        let est = [5, 3, 3, 9];
        assert_eq!(Placement::Earliest.choose(4, None, |c| est[c]), 1);
        assert_eq!(Placement::Earliest.choose(4, Some(2), |c| est[c]), 2);
        assert_eq!(Placement::Earliest.choose(4, Some(3), |c| est[c]), 1);
        assert_eq!(Placement::OnlyLocal.choose(4, Some(3), |c| est[c]), 3);
        assert_eq!(Placement::OnlyLocal.choose(4, None, |c| est[c]), 1);
    }
}
