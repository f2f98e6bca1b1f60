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
}

impl Source<'_> {
    pub(super) fn new<'a>(file: &'a str, text: &'a str) -> Source<'a> {
        let line_starts = text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1).collect();
        Source { file, text, line_starts }
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
        let message = e.message().trim().lines().map(str::trim).collect::<Vec<_>>().join("; ");
        let Some(span) = e.span() else {
            return ScenarioError { file: self.file.to_string(), line: None, message };
        };
        let mut prefix = section_context(self.text, span.start).map(|c| format!("{c}: ")).unwrap_or_default();
        if !message.contains("field `") {
            if let Some(key) = key_before(self.text, span.start) {
                prefix.push_str(&format!("field `{key}`: "));
            }
        }
        self.err(span.start, format!("{prefix}{message}"))
    }
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
