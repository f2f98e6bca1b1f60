//! The admission engine registry: the built-ins are found by name (both spellings of
//! `min_laxity`), an application's engine is built by name with the capacity asked for, and
//! taken or invalid names are refused. Registration is process-wide, so every test here
//! registers names of its own.

use std::time::Duration;

use tempi::policy::admit::{self, Admission, AdmissionEngine, AdmitError, AdmitId, TreeEngine};
use tempi::policy::RegistryError;
use tempi::Time;

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

fn at(n: u64) -> Time {
    Time::from_nanos(n)
}

/// An application's engine: the tree, keeping `margin` of every idle time in reserve.
struct WithMargin {
    inner: TreeEngine,
    margin: Duration,
}

impl AdmissionEngine for WithMargin {
    fn name(&self) -> &'static str {
        "with-margin"
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }
    fn idle_before(&self, deadline: Time, now: Time) -> Duration {
        self.inner.idle_before(deadline, now).saturating_sub(self.margin)
    }
    fn admit(&mut self, wcet: Duration, deadline: Time, now: Time) -> Result<Admission, AdmitError> {
        let idle = self.idle_before(deadline, now);
        if wcet > idle {
            return Ok(Admission::Rejected { idle });
        }
        self.inner.admit(wcet, deadline, now)
    }
    fn charge(&mut self, job: AdmitId, ran: Duration) -> Result<(), AdmitError> {
        self.inner.charge(job, ran)
    }
    fn finish(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        self.inner.finish(job)
    }
    fn withdraw(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        self.inner.withdraw(job)
    }
    fn expire(&mut self, now: Time) -> usize {
        self.inner.expire(now)
    }
    fn remaining(&self, job: AdmitId) -> Option<Duration> {
        self.inner.remaining(job)
    }
}

#[test]
fn built_in_engines_are_found_by_name_and_alias() {
    assert_eq!(admit::names()[..4], ["tree", "linear", "min_laxity", "hashed"]);
    for (asked, built) in [
        ("tree", "tree"),
        ("linear", "linear"),
        ("min_laxity", "min_laxity"),
        ("min-laxity", "min_laxity"),
        ("hashed", "hashed"),
    ] {
        let e = admit::by_name(asked, 7).unwrap();
        assert_eq!((e.name(), e.capacity(), e.len()), (built, 7, 0));
    }
    assert!(!admit::names().contains(&"min-laxity".to_string()));
    assert!(admit::by_name("min laxity", 7).is_none());
}

#[test]
fn registered_engine_is_built_by_name_with_the_capacity_asked_for() {
    admit::register("with-margin", |n| Box::new(WithMargin { inner: TreeEngine::with_capacity(n), margin: ns(2) }))
        .unwrap();
    let names = admit::names();
    assert_eq!(names[..admit::NAMES.len()], admit::NAMES[..]);
    assert!(names[admit::NAMES.len()..].contains(&"with-margin".to_string()));
    assert!(admit::registry().entry("with-margin").is_some_and(|e| !e.built_in));

    let mut e = admit::by_name("with-margin", 2).unwrap();
    assert_eq!((e.name(), e.capacity()), ("with-margin", 2));
    // 10 before the deadline, 2 held back: 9 does not fit, 8 does.
    assert_eq!(e.admit(ns(9), at(10), Time::ZERO), Ok(Admission::Rejected { idle: ns(8) }));
    assert!(matches!(e.admit(ns(8), at(10), Time::ZERO), Ok(Admission::Accepted(_))));
    assert!(matches!(e.admit(ns(0), at(20), Time::ZERO), Ok(Admission::Accepted(_))));
    assert_eq!(e.admit(ns(0), at(30), Time::ZERO), Err(AdmitError::Full { capacity: 2 }));
    // The built-in of the same shape, for contrast, gives the whole idle time.
    let mut plain = admit::by_name("tree", 2).unwrap();
    assert!(matches!(plain.admit(ns(9), at(10), Time::ZERO), Ok(Admission::Accepted(_))));
}

#[test]
fn taken_and_invalid_engine_names_are_refused() {
    let make = |n| Box::new(TreeEngine::with_capacity(n)) as Box<dyn AdmissionEngine>;
    for taken in ["tree", "linear", "min_laxity", "min-laxity", "hashed"] {
        assert_eq!(
            admit::register(taken, make),
            Err(RegistryError::Taken { family: "admission engine", name: taken.into() })
        );
    }
    admit::register("twice", make).unwrap();
    assert!(matches!(admit::register("twice", make), Err(RegistryError::Taken { .. })));
    for invalid in ["", "Tree", "9lives", "has space", &"x".repeat(65)] {
        assert_eq!(
            admit::register(invalid, make),
            Err(RegistryError::InvalidName { family: "admission engine", name: invalid.to_string() })
        );
    }
    assert_eq!(admit::by_name("twice", 3).unwrap().name(), "tree");
}
