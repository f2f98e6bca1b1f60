//! The `[admission]` table and the `[[request]]` tables: PORTS admission control in a
//! scenario. Each request arrives at its time on its CPU, is tested by the admission of its
//! target CPU (its own by default) and, if admitted, runs there as a thread with the
//! request's deadline, held to its WCET; a request refused by another CPU may be resubmitted
//! once to a third one, possibly smaller.
//!
//! Owns these tables' serde shapes, their checks, the submitter threads that make the
//! requests, and the admission part of the report ([`Admissions`]). It uses only the
//! library's public `admission` API, and must not touch the other tables.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use toml::{Spanned, Value};

use tempi::admission::{Admission, AdmissionError, AdmissionSpec, JobRequest, Refused};
use tempi::clock::{Clock, ClockMode};
use tempi::trace::admissions::{to_json_with_admissions, AdmissionEventRecord, AdmissionRecord};
use tempi::{RunOutcome, Runtime, ThreadId, ThreadSpec, Time, TimerSpec};

use super::source::Source;
use super::{Scenario, ScenarioError};

/// The `kind` of the `admission_events` row of a request the run ended before testing.
pub(crate) const NOT_TESTED: &str = "not tested: the run ended first";

/// The most entries `[admission] capacity` gives each CPU's engine (the library's limit).
const MAX_CAPACITY: usize = AdmissionSpec::MAX_CAPACITY;
/// The most jobs `[admission] max_live` lets be alive at once per CPU: each has a thread set
/// on every CPU, and with the file's own sets they must stay within the runtime's 2^20 set
/// slots even at 256 CPUs.
const MAX_LIVE: usize = 1024;

/// `[admission]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAdmission {
    engine: Option<Spanned<String>>,
    capacity: Option<Spanned<usize>>,
    max_live: Option<Spanned<usize>>,
}

/// `[[request]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequest {
    name: Spanned<String>,
    time: Spanned<Value>,
    cpu: Option<Spanned<usize>>,
    target: Option<Spanned<usize>>,
    wcet: Spanned<Value>,
    deadline: Spanned<Value>,
    work: Option<Spanned<Value>>,
    resubmit: Option<Spanned<usize>>,
    resubmit_wcet: Option<Spanned<Value>>,
}

/// A validated `[admission]` table with its requests.
///
/// ```
/// let sc = tempi_cli::parse("s.toml", "[runtime]\npolicy = \"edf\"\n[admission]\nengine = \"linear\"\n").unwrap();
/// assert_eq!(sc.admission.unwrap().engine, "linear");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionDef {
    /// Engine name (`tree`, `linear`, `min_laxity`).
    pub engine: String,
    /// Engine entries per CPU.
    pub capacity: usize,
    /// Admitted jobs alive at once per CPU (one thread set each).
    pub max_live: usize,
    /// The requests, in file order.
    pub requests: Vec<RequestDef>,
}

/// A validated `[[request]]` table.
///
/// ```
/// let text = "[runtime]\npolicy = \"edf\"\n[admission]\n[[request]]\nname = \"j\"\ntime = \"1ms\"\nwcet = \"2ms\"\ndeadline = \"5ms\"\n";
/// let r = &tempi_cli::parse("s.toml", text).unwrap().admission.unwrap().requests[0];
/// assert_eq!((r.cpu, r.target, r.work), (0, 0, r.wcet));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestDef {
    /// The job's name.
    pub name: String,
    /// Its line in the file.
    pub line: usize,
    /// When it arrives.
    pub time: Duration,
    /// The CPU it arrives on.
    pub cpu: usize,
    /// The CPU whose admission tests it.
    pub target: usize,
    /// Its WCET.
    pub wcet: Duration,
    /// Its deadline, relative to `time`.
    pub deadline: Duration,
    /// The CPU time it really needs (may exceed `wcet`: it is then stopped at `wcet`).
    pub work: Duration,
    /// Where to resubmit it if `target` refuses it, and with which WCET.
    pub resubmit: Option<(usize, Duration)>,
}

/// Checks `[admission]` and `[[request]]`; `None` when the file has neither.
pub(super) fn admission_def(
    src: &Source<'_>,
    admission: Option<&Spanned<RawAdmission>>,
    requests: &[Spanned<RawRequest>],
    cpus: usize,
    policy: &str,
) -> Result<Option<AdmissionDef>, ScenarioError> {
    let Some(table) = admission else {
        return match requests.first() {
            Some(r) => Err(src.err(r.span().start, "[[request]] needs an [admission] table")),
            None => Ok(None),
        };
    };
    let what = "[admission]: ";
    let edf = super::names::dispatches_edf(policy);
    if !edf {
        return Err(src.err(
            table.span().start,
            format!("{what}admitted jobs are dispatched EDF: set policy = \"edf\" in [runtime] (it is \"{policy}\")"),
        ));
    }
    let raw = table.get_ref();
    let engine = match &raw.engine {
        None => "tree".to_string(),
        Some(e) => {
            let name = e.get_ref().replace('-', "_");
            if !tempi::policy::admit::NAMES.contains(&name.as_str()) {
                let known = tempi::policy::admit::NAMES.join(", ");
                return Err(src.field(
                    what,
                    "engine",
                    e,
                    format!("unknown engine \"{}\" (known: {known})", e.get_ref()),
                ));
            }
            name
        }
    };
    let capacity = match &raw.capacity {
        Some(c) if *c.get_ref() > MAX_CAPACITY => {
            return Err(src.field(what, "capacity", c, format!("{} is above the limit of {MAX_CAPACITY}", c.get_ref())))
        }
        Some(c) => *c.get_ref(),
        None => 256,
    };
    let max_live = match &raw.max_live {
        Some(m) if *m.get_ref() == 0 => return Err(src.field(what, "max_live", m, "must be at least 1")),
        Some(m) if *m.get_ref() > MAX_LIVE => {
            return Err(src.field(what, "max_live", m, format!("{} is above the limit of {MAX_LIVE}", m.get_ref())))
        }
        Some(m) => *m.get_ref(),
        None => 8,
    };
    let mut defs = Vec::with_capacity(requests.len());
    for r in requests {
        let line = src.line(r.span().start);
        let raw = r.get_ref();
        let name = raw.name.get_ref().clone();
        let what = format!("[[request]] \"{name}\": ");
        let cpu_of = |field: &str, v: &Option<Spanned<usize>>| match v {
            Some(c) if *c.get_ref() >= cpus => {
                Err(src.field(&what, field, c, format!("CPU {} does not exist ({cpus} CPUs)", c.get_ref())))
            }
            Some(c) => Ok(Some(*c.get_ref())),
            None => Ok(None),
        };
        let cpu = cpu_of("cpu", &raw.cpu)?.unwrap_or(0);
        let target = cpu_of("target", &raw.target)?.unwrap_or(cpu);
        let wcet = src.positive(&what, "wcet", &raw.wcet)?;
        let resubmit = match cpu_of("resubmit", &raw.resubmit)? {
            Some(c) => Some((c, src.opt_duration(&what, "resubmit_wcet", &raw.resubmit_wcet)?.unwrap_or(wcet))),
            None if raw.resubmit_wcet.is_some() => {
                return Err(src.err(r.span().start, format!("{what}`resubmit_wcet` needs `resubmit`")))
            }
            None => None,
        };
        if let Some((_, w)) = resubmit.filter(|(_, w)| w.is_zero()) {
            return Err(src.err(r.span().start, format!("{what}`resubmit_wcet` must be positive, not {w:?}")));
        }
        defs.push(RequestDef {
            name,
            line,
            time: src.duration(&what, "time", &raw.time)?,
            cpu,
            target,
            wcet,
            deadline: src.positive(&what, "deadline", &raw.deadline)?,
            work: src.opt_duration(&what, "work", &raw.work)?.unwrap_or(wcet),
            resubmit,
        });
    }
    Ok(Some(AdmissionDef { engine, capacity, max_live, requests: defs }))
}

/// The admissions of a run, one per CPU, kept to write the report after it.
///
/// ```
/// use tempi::clock::VirtualClock;
/// let text = "[runtime]\npolicy = \"edf\"\n[admission]\n[[request]]\nname = \"j\"\ntime = \"0ms\"\nwcet = \"1ms\"\ndeadline = \"2ms\"\n";
/// let sc = tempi_cli::parse("s.toml", text).unwrap();
/// let (rt, adm) = sc.runtime_with_admission::<VirtualClock>(sc.config()).unwrap();
/// let out = rt.run().unwrap();
/// let json = adm.unwrap().report_json(&out);
/// assert!(json.contains("\"admissions\""));
/// ```
#[derive(Debug, Clone)]
pub struct Admissions {
    per_cpu: Vec<Admission>,
    /// Requests that could not be tested (engine full, too many live jobs), as report rows.
    errors: Arc<Mutex<Vec<AdmissionEventRecord>>>,
    /// Each CPU's submitter, its requests in the order it takes them (one job each), and
    /// which of them it began, to report those the run ended before.
    submitters: Vec<Submitter>,
}

/// A CPU's submitter thread and what it was given to submit.
#[derive(Debug, Clone)]
struct Submitter {
    thread: ThreadId,
    requests: Vec<RequestDef>,
    /// Set by the submitter as it begins each request (read once the run is over).
    begun: Arc<Vec<AtomicBool>>,
}

impl Admissions {
    /// The JSON report with every CPU's decisions and job events, in time order.
    ///
    /// ```
    /// # use tempi::clock::VirtualClock;
    /// # let sc = tempi_cli::parse("s.toml", "[runtime]\npolicy = \"edf\"\n[admission]\n").unwrap();
    /// let (rt, adm) = sc.runtime_with_admission::<VirtualClock>(sc.config()).unwrap();
    /// let json = adm.unwrap().report_json(&rt.run().unwrap());
    /// assert!(json.contains("\"admission_events\": []"));
    /// ```
    pub fn report_json(&self, out: &RunOutcome) -> String {
        let mut decisions: Vec<AdmissionRecord> = Vec::new();
        let mut events: Vec<AdmissionEventRecord> = Vec::new();
        for a in &self.per_cpu {
            let (d, e) = a.report_rows();
            decisions.extend(d);
            events.extend(e);
        }
        events.extend(self.errors.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
        // Nothing vanishes: a request its submitter never began (its time came after the
        // run's end, or the run ended while an earlier request was being answered) was never
        // tested; nor was one begun whose job did not complete and of which nothing was
        // recorded (the run ended while it waited for another CPU's answer). A begun job that
        // completed always left a decision or an event.
        for sub in &self.submitters {
            let done = out.threads.iter().find(|t| t.id == sub.thread).map_or(0, |t| t.stats.completed);
            for (j, r) in sub.requests.iter().enumerate() {
                let cut_off = j as u64 >= done
                    && !decisions.iter().any(|d| d.request == r.name)
                    && !events.iter().any(|e| e.request == r.name);
                if !sub.begun[j].load(Ordering::Relaxed) || cut_off {
                    events.push(AdmissionEventRecord {
                        request: r.name.clone(),
                        time: out.end.as_nanos(),
                        cpu: r.cpu,
                        wcet: u64::try_from(r.wcet.as_nanos()).unwrap_or(u64::MAX),
                        kind: NOT_TESTED.to_string(),
                    });
                }
            }
        }
        decisions.sort_by_key(|d| d.order);
        events.sort_by_key(|e| e.time);
        to_json_with_admissions(out, &decisions, &events)
    }
}

impl Scenario {
    /// The thread sets `[admission]` needs on each CPU (its enforcement pool).
    pub(super) fn admission_sets(&self) -> usize {
        self.admission.as_ref().map_or(0, |a| a.max_live)
    }

    /// Create one admission per CPU and a submitter thread per CPU that has requests.
    pub(super) fn populate_admission<C: Clock>(
        &self,
        rt: &mut Runtime<C>,
    ) -> Result<Option<Admissions>, ScenarioError> {
        let Some(def) = &self.admission else { return Ok(None) };
        let at = |line: usize, message: String| ScenarioError { file: self.file.clone(), line: Some(line), message };
        let mut per_cpu = Vec::with_capacity(self.cpus);
        for cpu in 0..self.cpus {
            let spec = AdmissionSpec::new(cpu)
                .engine(&def.engine)
                .capacity(def.capacity)
                .max_live(def.max_live)
                .log_capacity(def.requests.len() * 2 + 16);
            per_cpu.push(Admission::new(rt, spec).map_err(|e| self.error(format!("[admission]: {e}")))?);
        }
        let errors: Arc<Mutex<Vec<AdmissionEventRecord>>> =
            Arc::new(Mutex::new(Vec::with_capacity(def.requests.len())));
        let mut submitters = Vec::new();
        for cpu in 0..self.cpus {
            let mut mine: Vec<RequestDef> = def.requests.iter().filter(|r| r.cpu == cpu).cloned().collect();
            if mine.is_empty() {
                continue;
            }
            mine.sort_by_key(|r| r.time);
            let n = mine.len();
            // In virtual time a deadline of 1 ns puts the submitter ahead of every admitted
            // job (whose deadlines are later), and it finishes at its release since it takes
            // no time. In real time it takes time (a cross-CPU submission waits for the
            // target's answer), so 1 ns would be a miss every time: it is due 1 ns before its
            // CPU's shortest request deadline instead (its jobs are released at their timers'
            // instants), still ahead of every job its own requests start, which are due at
            // that deadline or later, so that none of them delays the next request.
            let due = match C::MODE {
                ClockMode::Virtual => Duration::from_nanos(1),
                ClockMode::Real => mine
                    .iter()
                    .map(|r| r.deadline.saturating_sub(Duration::from_nanos(1)))
                    .min()
                    .unwrap_or(Duration::from_nanos(1))
                    .max(Duration::from_nanos(1)),
            };
            let spec = ThreadSpec::new(format!("requests@{cpu}"))
                .cpu(cpu)
                .sporadic(Duration::ZERO)
                .deadline(due)
                .max_jobs(u32::try_from(n).unwrap_or(u32::MAX))
                .release_queue(n);
            let times: Vec<Duration> = mine.iter().map(|r| r.time).collect();
            let planned = mine.clone();
            let begun: Arc<Vec<AtomicBool>> = Arc::new((0..n).map(|_| AtomicBool::new(false)).collect());
            let beginning = begun.clone();
            let admissions = per_cpu.clone();
            let failed = errors.clone();
            let line = mine[0].line;
            let submitter = rt
                .spawn(spec, move |cx| {
                    let j = cx.job().number as usize;
                    let Some(r) = mine.get(j) else { return };
                    beginning[j].store(true, Ordering::Relaxed);
                    // Counted from the request's declared time, not from when it was served
                    // (in real time the submitter may be served late).
                    let deadline = Time::ZERO + r.time + r.deadline;
                    let request = |wcet: Duration, work: Duration| {
                        JobRequest::new(r.name.as_str(), wcet, deadline, move |cx| cx.work(work))
                    };
                    // A request that could not be tested is reported, and the next ones go on.
                    // A job that fitted but could not be started is in its admission's own
                    // events already.
                    let report = |wcet: Duration, e: &AdmissionError| {
                        if matches!(e, AdmissionError::NotStarted(_)) {
                            return;
                        }
                        let row = AdmissionEventRecord {
                            request: r.name.clone(),
                            time: cx.now().as_nanos(),
                            cpu: cx.cpu(),
                            wcet: u64::try_from(wcet.as_nanos()).unwrap_or(u64::MAX),
                            kind: format!("error: {e}"),
                        };
                        failed.lock().unwrap_or_else(|e| e.into_inner()).push(row);
                    };
                    match admissions[r.target].admit(cx, request(r.wcet, r.work)) {
                        Err(Refused::Nack(_)) => {
                            if let Some((elsewhere, wcet)) = r.resubmit {
                                // The smaller version does no more than its WCET; its answer
                                // is in the decision log like the first one.
                                if let Err(Refused::Error(e)) =
                                    admissions[elsewhere].admit(cx, request(wcet, r.work.min(wcet)))
                                {
                                    report(wcet, &e);
                                }
                            }
                        }
                        Err(Refused::Error(e)) => report(r.wcet, &e),
                        Ok(_) => {}
                    }
                })
                .map_err(|e| at(line, e.to_string()))?;
            submitters.push(Submitter { thread: submitter, requests: planned, begun });
            for t in times {
                rt.add_timer(TimerSpec::at(Time::ZERO + t).cpu(cpu), move |ev| {
                    // The queue holds every request of the CPU: a release cannot be refused.
                    let _ = ev.release(submitter);
                })
                .map_err(|e| at(line, e.to_string()))?;
            }
        }
        Ok(Some(Admissions { per_cpu, errors, submitters }))
    }
}
