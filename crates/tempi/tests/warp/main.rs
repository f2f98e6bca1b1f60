//! Warp: the Time Warp engine's exact rollback timelines, its agreement with the sequential
//! mode over random models and interleavings, its memory bounds, and the reverse-handler check.

mod warp_check_mode;
mod warp_guarantees;
mod warp_parallel;
mod warp_properties;
mod warp_timelines;

use tempi::warp::{Emit, LogRecord, LpId, Model};

/// An event that carries the sends its processing makes: `(receiver, delay, what that event
/// sends in turn)`. Timelines are written as data.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Script(pub Vec<(u32, u64, Script)>);

/// The scripted model: each LP's state is the list of timestamps it processed, in order.
pub struct Scripted;

impl Model for Scripted {
    type State = Vec<u64>;
    type Event = Script;
    type Saved = ();
    const HAS_REVERSE: bool = true;

    fn event(&self, _: LpId, seen: &mut Vec<u64>, script: &Script, _: &mut (), out: &mut Emit<'_, Script>) {
        seen.push(out.time());
        for (to, delay, next) in &script.0 {
            out.send(LpId(*to), out.time() + delay, next.clone());
        }
    }

    fn reverse(&self, _: LpId, seen: &mut Vec<u64>, _: &Script, _: &()) {
        seen.pop();
    }

    fn same_event(&self, a: &Script, b: &Script) -> bool {
        a == b
    }
}

/// A log record in short form: `P1@20` process, `R1@20` rollback, `A0>1@25` anti-message,
/// `X1@25` annihilation, `C1@20` commit (LP and timestamp; the hand-built cases use distinct
/// timestamps).
pub fn short(r: &LogRecord) -> String {
    match r {
        LogRecord::Process { lp, key } => format!("P{}@{}", lp.0, key.time),
        LogRecord::Rollback { lp, key } => format!("R{}@{}", lp.0, key.time),
        LogRecord::Anti { from, to, key } => format!("A{}>{}@{}", from.0, to.0, key.time),
        LogRecord::Annihilate { lp, key } => format!("X{}@{}", lp.0, key.time),
        LogRecord::Commit { lp, key } => format!("C{}@{}", lp.0, key.time),
    }
}

pub fn short_log(log: &[LogRecord]) -> String {
    log.iter().map(short).collect::<Vec<_>>().join(" ")
}
