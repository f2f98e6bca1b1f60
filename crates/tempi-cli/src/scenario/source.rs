//! Where a scenario error is: byte offsets into the file turned into `FILE:LINE:` errors that
//! name the table and key, for both the second pass and `toml`'s own errors.
//!
//! Owns [`Source`] and the text scanning that finds the enclosing table and key. It must not
//! decide whether a value is valid; the validating files call it to phrase and place their
//! messages.

use std::fmt;
use std::time::Duration;

use toml::{Spanned, Value};

use super::duration::duration_value;
use super::ScenarioError;

/// Where errors are reported: the file name and its text, to turn byte offsets into lines.
pub(super) struct Source<'a> {
    file: &'a str,
    text: &'a str,
    /// Byte offset of the start of every line after the first, in increasing order. Every
    /// table asks for its line, so counting newlines from the start each time would make
    /// loading quadratic in the size of the file.
    line_starts: Vec<usize>,
    /// What the file is warned about, in the order found; the checks hold `&Source`, so
    /// they add through a shared reference.
    warnings: std::cell::RefCell<Vec<ScenarioError>>,
}

impl Source<'_> {
    pub(super) fn new<'a>(file: &'a str, text: &'a str) -> Source<'a> {
        let line_starts = text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1).collect();
        Source { file, text, line_starts, warnings: std::cell::RefCell::new(Vec::new()) }
    }

    /// Note a warning at byte `offset`: the file is valid, but probably not what was meant.
    pub(super) fn warn(&self, offset: usize, message: impl Into<String>) {
        let w = self.err(offset, message);
        self.warnings.borrow_mut().push(w);
    }

    /// The warnings noted so far, taken out.
    pub(super) fn take_warnings(&self) -> Vec<ScenarioError> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }

    /// Warn about a bare integer read as nanoseconds where so short a time is unlikely to be
    /// meant (`period = 10` for 10 ms). Simulated overheads (`costs.*`) are often that short
    /// and are left alone; so is 0.
    pub(super) fn warn_bare_integer(&self, what: &str, field: &str, v: &Spanned<Value>) {
        let bare = match v.get_ref() {
            Value::Integer(n) => Some(*n),
            Value::String(text) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
            _ => None,
        };
        if let Some(n) = bare
            && (1..BARE_INTEGER_WARNING_BELOW).contains(&n)
            && !field.starts_with("costs.")
        {
            self.warn(
                v.span().start,
                format!(
                    "{what}field `{field}`: the bare integer {n} is read as {n} ns (a bare integer is nanoseconds); \
                         write it with a unit, e.g. \"{n}ms\" or \"{n}ns\", to say which is meant"
                ),
            );
        }
    }

    /// The 1-based line of byte `offset`: one more than the number of newlines before it.
    pub(super) fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.line_starts.partition_point(|&start| start <= end) + 1
    }

    pub(super) fn err(&self, offset: usize, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: self.file.to_string(), line: Some(self.line(offset)), message: message.into() }
    }

    /// `WHAT: field `FIELD`: MESSAGE` at the value's line.
    pub(super) fn field<T>(
        &self,
        what: &str,
        field: &str,
        at: &Spanned<T>,
        message: impl fmt::Display,
    ) -> ScenarioError {
        self.err(at.span().start, format!("{what}field `{field}`: {message}"))
    }

    pub(super) fn duration(&self, what: &str, field: &str, v: &Spanned<Value>) -> Result<Duration, ScenarioError> {
        self.warn_bare_integer(what, field, v);
        duration_value(v.get_ref()).map_err(|m| self.field(what, field, v, m))
    }

    pub(super) fn opt_duration(
        &self,
        what: &str,
        field: &str,
        v: &Option<Spanned<Value>>,
    ) -> Result<Option<Duration>, ScenarioError> {
        v.as_ref().map(|v| self.duration(what, field, v)).transpose()
    }

    pub(super) fn positive(&self, what: &str, field: &str, v: &Spanned<Value>) -> Result<Duration, ScenarioError> {
        let d = self.duration(what, field, v)?;
        if d.is_zero() {
            return Err(self.field(what, field, v, "must be positive"));
        }
        Ok(d)
    }

    /// Turn one of `toml`'s own errors into ours: its span gives the line, the text around it
    /// the field and the table, so the message reads like the ones raised after parsing.
    pub(super) fn toml_error(&self, e: &toml::de::Error) -> ScenarioError {
        // toml's messages may span lines ("invalid table header\nexpected ..."); ours are one.
        let mut message = e.message().trim().lines().map(str::trim).collect::<Vec<_>>().join("; ");
        if let Some(near) = nearest_expected(&message) {
            message.push_str(&format!("; did you mean `{near}`?"));
        }
        let Some(span) = e.span() else {
            return ScenarioError { file: self.file.to_string(), line: None, message };
        };
        let mut prefix = section_context(self.text, span.start).map(|c| format!("{c}: ")).unwrap_or_default();
        if !message.contains("field `")
            && let Some(key) = key_before(self.text, span.start)
        {
            prefix.push_str(&format!("field `{key}`: "));
        }
        self.err(span.start, format!("{prefix}{message}"))
    }
}

/// A bare integer duration below this many nanoseconds (one microsecond) is warned about.
pub(super) const BARE_INTEGER_WARNING_BELOW: i64 = 1000;

/// For `toml`'s "unknown field `X`, expected one of `a`, `b`" (and "unknown variant", for a
/// value such as `kind`), the expected name closest to `X` if it is close enough to be a
/// typo: at most a third of the longer name's letters apart (at least one), by edit distance.
fn nearest_expected(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("unknown variant `"))?;
    let (given, rest) = rest.split_once('`')?;
    let list = rest.strip_prefix(", expected one of ").or_else(|| rest.strip_prefix(", expected "))?;
    let candidates = list.split(", ").filter_map(|c| c.trim_start_matches("or ").strip_prefix('`')?.strip_suffix('`'));
    let given_lower = given.to_lowercase();
    let (best, distance) =
        candidates.map(|c| (c, edit_distance(&given_lower, &c.to_lowercase()))).min_by_key(|&(_, d)| d)?;
    let allowed = (given.chars().count().max(best.chars().count()) / 3).max(1);
    (distance <= allowed && best != given).then(|| best.to_string())
}

/// Levenshtein distance with adjacent transpositions counted as one edit (`perod`, `peirod`
/// are both one away from `period`).
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows: two back for transpositions, one back, and the current one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The key whose value starts at or contains `offset`: the identifier before the last `=`
/// on that line, left of `offset`. Good enough for `key = value` and inline tables.
fn key_before(text: &str, offset: usize) -> Option<String> {
    let offset = floor_char_boundary(text, offset);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let left = &text[line_start..offset];
    let eq = left.rfind('=')?;
    let key = left[..eq].trim_end();
    let start = key.rfind(|c: char| c.is_whitespace() || c == '{' || c == ',' || c == '[').map_or(0, |i| i + 1);
    let key = key[start..].trim_matches('"');
    (!key.is_empty()).then(|| key.to_string())
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Which table `offset` falls in, from the table headers above it: `thread "NAME"` (or
/// `thread #N` if the table has no readable name), `set "NAME"` (or `set #N`), `timer #N`,
/// `[runtime]`.
fn section_context(text: &str, offset: usize) -> Option<String> {
    let offset = floor_char_boundary(text, offset);
    let lines: Vec<&str> = text.split('\n').collect();
    let target = text[..offset].matches('\n').count();
    let mut header: Option<(usize, &str)> = None;
    let (mut threads, mut timers, mut sets, mut resources) = (0, 0, 0, 0);
    for (i, line) in lines.iter().enumerate().take(target + 1) {
        let t = line.trim();
        if t.starts_with("[[thread]]") {
            threads += 1;
            header = Some((i, "thread"));
        } else if t.starts_with("[[timer]]") {
            timers += 1;
            header = Some((i, "timer"));
        } else if t.starts_with("[[set]]") {
            sets += 1;
            header = Some((i, "set"));
        } else if t.starts_with("[[resource]]") {
            resources += 1;
            header = Some((i, "resource"));
        } else if t.starts_with('[') {
            header = Some((i, if t.starts_with("[runtime]") { "runtime" } else { "" }));
        }
    }
    let (at, kind) = header?;
    match kind {
        "runtime" => Some("[runtime]".to_string()),
        "timer" => Some(format!("timer #{timers}")),
        "thread" | "set" | "resource" => {
            let name = lines[at + 1..].iter().take_while(|l| !l.trim().starts_with('[')).find_map(|l| {
                let (k, v) = l.split_once('=')?;
                let v = v.trim();
                (k.trim() == "name" && v.starts_with('"')).then(|| v[1..].split('"').next().unwrap_or("").to_string())
            });
            let number = match kind {
                "set" => sets,
                "resource" => resources,
                _ => threads,
            };
            Some(match name {
                Some(n) => format!("{kind} \"{n}\""),
                None => format!("{kind} #{number}"),
            })
        }
        _ => None,
    }
}
