//! Policies: the decisions the kernel delegates.
//!
//! Each family has a folder with its trait in `mod.rs` and one built-in policy per file. A
//! policy sees only what its trait passes it; it never reaches into the kernel's thread table.
//! Families present: [`sched`] (which thread runs), [`lock`] (what acquiring, contending and
//! releasing a lock does), [`queue`] (the order in which semaphore waiters are served) and
//! [`budget`] (what an execution-time overrun does). [`admit`] holds the EDF admission
//! engines (whether a job can still meet its deadline on a CPU): pure data structures that
//! the kernel never calls; the admission front end (`crate::admission`) owns one per CPU and
//! asks it before a job is spawned.
//!
//! Every family has a [`Registry`] of named constructors, pre-filled with its built-in
//! policies, that the family's `by_name` reads and an application may add to at start-up
//! (`sched::register`, `lock::register`, `queue::register`, `budget::register`,
//! `admit::register`). A registry is
//! process-wide: a name registered once is known to every runtime of the process, and it
//! cannot be removed or replaced. Lookups happen when a runtime, lock, semaphore or budget is
//! created, never while threads are dispatched.

pub mod admit;
pub mod budget;
pub mod lock;
pub mod queue;
pub mod sched;

use std::fmt;
use std::sync::RwLock;

/// Why a name could not be registered.
///
/// ```
/// use tempi::policy::RegistryError;
/// let e = tempi::policy::lock::register("bpi", || Box::new(tempi::policy::lock::BasicPriority));
/// assert_eq!(e, Err(RegistryError::Taken { family: "lock protocol", name: "bpi".into() }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryError {
    /// The name (or a built-in alias) already denotes a policy of this family.
    Taken {
        /// The family, e.g. `"lock protocol"`.
        family: &'static str,
        /// The name asked for.
        name: String,
    },
    /// The name is not 1 to [`Registry::MAX_NAME_LEN`] characters of lower-case ASCII letters,
    /// digits, `-` and `_`, starting with a letter.
    InvalidName {
        /// The family, e.g. `"scheduler"`.
        family: &'static str,
        /// The name asked for.
        name: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::Taken { family, name } => write!(f, "{family} \"{name}\" is already registered"),
            RegistryError::InvalidName { family, name } => write!(
                f,
                "\"{name}\" is not a valid {family} name (1 to {} characters: lower-case letters, digits, \
                 '-' and '_', starting with a letter)",
                Registry::<()>::MAX_NAME_LEN
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// One registered policy: its name, whether it is one of the library's own, and its
/// constructor.
///
/// ```
/// let e = tempi::policy::lock::registry().entry("pi").unwrap();
/// assert_eq!((e.name.as_str(), e.built_in), ("bpi", true));
/// assert_eq!((e.constructor)().name(), "bpi");
/// ```
#[derive(Clone, Debug)]
pub struct Entry<C> {
    /// The registered name (an alias resolves to the name it stands for).
    pub name: String,
    /// Whether the library registered it (as opposed to the application).
    pub built_in: bool,
    /// What builds the policy.
    pub constructor: C,
}

/// Named constructors of one policy family, shared by the whole process.
///
/// `C` is what the family builds its policies with (for locks, an
/// `Arc<dyn Fn() -> Box<dyn LockPolicy>>`). A registry starts with the family's built-in
/// policies and their aliases; [`Registry::register`] adds a name, which then stays for the
/// life of the process. Reads take a shared lock and clone the constructor, so a registry is
/// meant for the moment an object is created, not for paths that run per dispatch.
///
/// ```
/// use tempi::policy::Registry;
/// let colours: Registry<u32> = Registry::new("colour", &[("red", &["crimson"], 1), ("blue", &[], 2)]);
/// assert_eq!(colours.get("crimson"), Some(1));
/// colours.register("green", 3).unwrap();
/// assert_eq!(colours.names(), ["red", "blue", "green"]);
/// assert!(colours.register("red", 4).is_err());
/// ```
#[derive(Debug)]
pub struct Registry<C> {
    family: &'static str,
    state: RwLock<Names<C>>,
}

#[derive(Debug)]
struct Names<C> {
    /// Every policy, in registration order (built-ins first).
    entries: Vec<Entry<C>>,
    /// Every name and alias, with the index of the entry it denotes.
    lookup: Vec<(String, usize)>,
}

impl<C: Clone> Registry<C> {
    /// The longest name [`Registry::register`] accepts.
    ///
    /// ```
    /// assert_eq!(tempi::policy::Registry::<()>::MAX_NAME_LEN, 64);
    /// ```
    pub const MAX_NAME_LEN: usize = 64;

    /// A registry of `family` (a noun for messages, e.g. `"scheduler"`), filled with
    /// `built_ins`: each a name, its aliases and its constructor.
    ///
    /// ```
    /// let r: tempi::policy::Registry<u8> = tempi::policy::Registry::new("digit", &[("one", &[], 1)]);
    /// assert_eq!(r.family(), "digit");
    /// ```
    pub fn new(family: &'static str, built_ins: &[(&str, &[&str], C)]) -> Registry<C> {
        let mut names = Names { entries: Vec::new(), lookup: Vec::new() };
        for (name, aliases, constructor) in built_ins {
            let at = names.entries.len();
            names.entries.push(Entry { name: name.to_string(), built_in: true, constructor: constructor.clone() });
            names.lookup.push((name.to_string(), at));
            names.lookup.extend(aliases.iter().map(|a| (a.to_string(), at)));
        }
        Registry { family, state: RwLock::new(names) }
    }

    /// The family's noun, as used in error messages.
    ///
    /// ```
    /// assert_eq!(tempi::policy::lock::registry().family(), "lock protocol");
    /// ```
    pub fn family(&self) -> &'static str {
        self.family
    }

    /// Add `name`. Fails if the name is taken (by a policy or an alias) or is not a valid
    /// name (see [`RegistryError::InvalidName`]).
    ///
    /// ```
    /// let r: tempi::policy::Registry<u8> = tempi::policy::Registry::new("digit", &[]);
    /// assert!(r.register("two", 2).is_ok());
    /// assert!(r.register("Two", 2).is_err());
    /// ```
    pub fn register(&self, name: &str, constructor: C) -> Result<(), RegistryError> {
        if !Self::valid_name(name) {
            return Err(RegistryError::InvalidName { family: self.family, name: name.to_string() });
        }
        let mut names = self.write();
        if names.lookup.iter().any(|(n, _)| n == name) {
            return Err(RegistryError::Taken { family: self.family, name: name.to_string() });
        }
        let at = names.entries.len();
        names.entries.push(Entry { name: name.to_string(), built_in: false, constructor });
        names.lookup.push((name.to_string(), at));
        Ok(())
    }

    /// The constructor registered under `name` or an alias of it.
    ///
    /// ```
    /// assert!(tempi::policy::queue::registry().get("priority").is_some());
    /// ```
    pub fn get(&self, name: &str) -> Option<C> {
        self.entry(name).map(|e| e.constructor)
    }

    /// The entry `name` (or an alias of it) denotes.
    ///
    /// ```
    /// assert!(tempi::policy::budget::registry().entry("kill").unwrap().built_in);
    /// ```
    pub fn entry(&self, name: &str) -> Option<Entry<C>> {
        let names = self.read();
        let &(_, at) = names.lookup.iter().find(|(n, _)| n == name)?;
        Some(names.entries[at].clone())
    }

    /// The registered names, built-ins first, in registration order; aliases are not listed.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::registry().names()[..2], ["fp", "edf"]);
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.read().entries.iter().map(|e| e.name.clone()).collect()
    }

    fn valid_name(name: &str) -> bool {
        name.len() <= Self::MAX_NAME_LEN
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    }

    // A writer that panicked left the lists whole (each push is complete), so a poisoned lock
    // is still safe to read and to extend.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Names<C>> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Names<C>> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }
}
