//! Checking one `[[set]]` table: its members (each thread in at most one set) and its budget,
//! written either as a `server` shorthand or as `replenish`/`period`/`action`.
//!
//! Owns [`set_def`] and the budget rules; `validate.rs` calls it in file order and keeps the
//! indices. Budget action names are looked up through `names.rs`. It must not build the
//! library [`tempi::Budget`] (that is [`BudgetDef::budget`] in `runtime.rs`) nor touch a
//! runtime.

use std::collections::HashMap;
use std::time::Duration;

use toml::{Spanned, Value};

use tempi::Replenishment;

use super::names::{self, DEFAULT_BUDGET_ACTION, SERVER_BUDGET_ACTION};
use super::raw::RawSet;
use super::source::Source;
use super::{BudgetDef, ScenarioError, ServerKind, SetDef};

/// The name indices a `[[set]]` table is checked against.
#[derive(Clone, Copy)]
pub(super) struct NameIndices<'a> {
    pub(super) threads: &'a HashMap<String, usize>,
    pub(super) sets: &'a HashMap<String, usize>,
}

pub(super) fn set_def(
    src: &Source<'_>,
    t: &Spanned<RawSet>,
    cpus: usize,
    earlier: &[SetDef],
    indices: NameIndices<'_>,
    set_of: &mut [Option<usize>],
) -> Result<SetDef, ScenarioError> {
    let line = src.line(t.span().start);
    let r = t.get_ref();
    let name = r.name.get_ref().clone();
    if name.trim().is_empty() {
        return Err(src.field("set: ", "name", &r.name, "must not be empty"));
    }
    let what = format!("set \"{name}\": ");
    let what = what.as_str();
    if let Some(&o) = indices.sets.get(&name) {
        return Err(src.field(
            what,
            "name",
            &r.name,
            format!("duplicate set name (first used at line {})", earlier[o].line),
        ));
    }
    let cpu = match &r.cpu {
        Some(c) if *c.get_ref() >= cpus => {
            return Err(src.field(
                what,
                "cpu",
                c,
                format!("CPU {} does not exist: [runtime] has cpus = {cpus}, numbered from 0", c.get_ref()),
            ))
        }
        Some(c) => *c.get_ref(),
        None => 0,
    };

    let mut members: Vec<usize> = Vec::new();
    for m in r.members.iter().flatten() {
        let Some(&i) = indices.threads.get(m.get_ref()) else {
            return Err(src.field(what, "members", m, format!("no thread named \"{}\"", m.get_ref())));
        };
        if set_of[i] == Some(earlier.len()) {
            return Err(src.field(what, "members", m, format!("thread \"{}\" is listed twice", m.get_ref())));
        }
        // As in MaRTE OS and Ada 2005, a thread is charged to at most one group clock.
        if let Some(o) = set_of[i].map(|o| &earlier[o]) {
            return Err(src.field(
                what,
                "members",
                m,
                format!(
                    "thread \"{}\" is already in set \"{}\" (line {}): a thread belongs to at most one set",
                    m.get_ref(),
                    o.name,
                    o.line
                ),
            ));
        }
        set_of[i] = Some(earlier.len());
        members.push(i);
    }

    let budget = match &r.budget {
        None => {
            // Budget keys without a budget would be silently meaningless: point at the first.
            let stray = [
                ("replenish", r.replenish.as_ref().map(|v| v.span())),
                ("action", r.action.as_ref().map(|v| v.span())),
                ("server", r.server.as_ref().map(|v| v.span())),
                ("period", r.period.as_ref().map(|v| v.span())),
            ]
            .into_iter()
            .find_map(|(k, span)| span.map(|s| (k, s)));
            if let Some((key, span)) = stray {
                return Err(src.err(span.start, format!("{what}field `{key}`: only applies with a `budget`")));
            }
            None
        }
        Some(b) => Some(budget_def(src, what, r, b)?),
    };
    Ok(SetDef { name, line, cpu, members, budget })
}

fn budget_def(src: &Source<'_>, what: &str, r: &RawSet, b: &Spanned<Value>) -> Result<BudgetDef, ScenarioError> {
    let amount = src.positive(what, "budget", b)?;
    // The rule comes from `server` or from `replenish`; remember which key chose it, so a
    // missing period is reported where the rule was written.
    let (server, replenish_name, rule_at) = match (&r.server, &r.replenish, &r.action) {
        (Some(_), Some(other), _) | (Some(_), None, Some(other)) => {
            let key = if r.replenish.is_some() { "replenish" } else { "action" };
            return Err(src.field(
                what,
                key,
                other,
                "give either `server` or `replenish`/`action`, not both (a server sets both)",
            ));
        }
        (Some(s), None, None) => {
            let kind = match s.get_ref().as_str() {
                "deferrable" => ServerKind::Deferrable,
                "sporadic" => ServerKind::Sporadic,
                "cbs" => ServerKind::ConstantBandwidth,
                other => {
                    return Err(src.field(
                        what,
                        "server",
                        s,
                        format!("unknown server \"{other}\" (expected deferrable, sporadic or cbs)"),
                    ))
                }
            };
            let name = match kind {
                ServerKind::Deferrable => "periodic",
                ServerKind::Sporadic => "sporadic",
                ServerKind::ConstantBandwidth => "cbs",
            };
            (Some(kind), name, Some(s.span().start))
        }
        (None, replenish, _) => {
            let name = match replenish {
                None => "manual",
                Some(p) => match p.get_ref().as_str() {
                    n @ ("manual" | "periodic" | "sporadic" | "cbs") => n,
                    other => {
                        return Err(src.field(
                            what,
                            "replenish",
                            p,
                            format!("unknown replenishment \"{other}\" (expected manual, periodic, sporadic or cbs)"),
                        ))
                    }
                },
            };
            (None, name, replenish.as_ref().map(|p| p.span().start))
        }
    };

    let period = match (replenish_name, &r.period) {
        ("manual", Some(p)) => {
            return Err(src.field(
                what,
                "period",
                p,
                "a manual budget has no period (set replenish = \"periodic\", \"sporadic\" or \"cbs\")",
            ))
        }
        ("manual", None) => Duration::ZERO,
        (_, Some(p)) => src.positive(what, "period", p)?,
        (rule, None) => {
            let at = rule_at.unwrap_or(b.span().start);
            let how = match server {
                Some(_) => format!("required by server = \"{}\"", server_name(server)),
                None => format!("required when replenish = \"{rule}\""),
            };
            return Err(src.err(at, format!("{what}field `period`: {how}")));
        }
    };
    let replenish = match replenish_name {
        "periodic" => Replenishment::Periodic { period },
        "sporadic" => Replenishment::Sporadic { period },
        "cbs" => Replenishment::ConstantBandwidth { period },
        _ => Replenishment::Manual,
    };

    let action = match (server, &r.action) {
        (Some(ServerKind::ConstantBandwidth), _) => DEFAULT_BUDGET_ACTION.to_string(),
        (Some(_), _) => SERVER_BUDGET_ACTION.to_string(),
        (None, None) => DEFAULT_BUDGET_ACTION.to_string(),
        (None, Some(a)) => {
            let name = a.get_ref().as_str();
            if names::budget_action(name).is_none() {
                return Err(src.field(what, "action", a, names::unknown_budget_action(name)));
            }
            // A constant bandwidth server refills the moment it runs out, so nothing would
            // ever lift a demotion or a suspension: the members would be held for good.
            if replenish == (Replenishment::ConstantBandwidth { period }) && name != DEFAULT_BUDGET_ACTION {
                return Err(src.field(
                    what,
                    "action",
                    a,
                    "a constant bandwidth server (replenish = \"cbs\") refills at once and only supports \
                     action = \"notify\"",
                ));
            }
            name.to_string()
        }
    };
    Ok(BudgetDef { amount, replenish, action, server })
}

fn server_name(kind: Option<ServerKind>) -> &'static str {
    match kind {
        Some(ServerKind::Deferrable) => "deferrable",
        Some(ServerKind::Sporadic) => "sporadic",
        Some(ServerKind::ConstantBandwidth) => "cbs",
        None => "",
    }
}
