//! `--format sarif`: SARIF 2.1.0 through serde-sarif's typed model.

use std::collections::BTreeMap;

use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation, Region,
    ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif, Tool, ToolComponent,
};

use crate::diagnostics::codes::Code;
use crate::diagnostics::{Location as Place, Report, Severity};

/// A file path as a SARIF `uri`: a relative reference, or a `file://` URI for an
/// absolute path, every byte other than unreserved characters and `/` percent-encoded
/// (RFC 3986), so spaces, `#`, `?`, `%` and non-ASCII names survive.
pub fn uri(path: &std::path::Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut out = String::with_capacity(text.len() + 8);
    if text.starts_with('/') {
        out.push_str("file://");
    } else if text.as_bytes().get(1) == Some(&b':') && text.as_bytes()[0].is_ascii_alphabetic() {
        // A Windows drive (`C:/...`).
        out.push_str("file:///");
        out.push_str(&text[..2]);
        return encode_into(out, &text[2..]);
    }
    encode_into(out, &text)
}

fn encode_into(mut out: String, text: &str) -> String {
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn location(place: &Place, message: Option<&str>) -> Location {
    let region = Region::builder()
        .start_line(place.line as i64)
        .start_column(place.column as i64)
        .end_line(place.end_line as i64)
        .end_column(place.end_column as i64)
        .build();
    let physical = PhysicalLocation::builder()
        .artifact_location(ArtifactLocation::builder().uri(uri(&place.file)).build())
        .region(region)
        .build();
    match message {
        Some(text) if !text.is_empty() => Location::builder()
            .physical_location(physical)
            .message(Message::builder().text(text.to_string()).build())
            .build(),
        _ => Location::builder().physical_location(physical).build(),
    }
}

/// Where every diagnostic code's cause and fix are described (SARIF's `helpUri`).
pub const DOCS_CODES: &str =
    "https://github.com/deployfit/deployfit/blob/main/docs/language.md#diagnostic-codes";

/// A rule's SARIF `name`: the code's words in CamelCase (`deploy::fit::does_not_fit` is
/// `FitDoesNotFit`), as code scanning shows it.
fn rule_name(code: &str) -> String {
    code.trim_start_matches("deploy::")
        .split([':', '_'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

pub fn render(report: &Report<'_>) -> String {
    let mut rules: BTreeMap<String, ReportingDescriptor> = BTreeMap::new();
    let mut results = Vec::new();
    for diag in report.diagnostics {
        let summary = Code::parse(&diag.code)
            .map(|code| code.summary().to_string())
            .unwrap_or_else(|| format!("rule {}", diag.code));
        rules.entry(diag.code.clone()).or_insert_with(|| {
            let full = format!(
                "{summary}. Reported with a span, a label on the field that caused it and a help that names a fix; every code's cause and fix are listed in the language reference ({DOCS_CODES})."
            );
            ReportingDescriptor::builder()
                .id(diag.code.clone())
                .name(rule_name(&diag.code))
                .short_description(MultiformatMessageString::builder().text(summary).build())
                .full_description(MultiformatMessageString::builder().text(full).build())
                .help_uri(DOCS_CODES)
                .build()
        });
        let level = match diag.severity {
            Severity::Error => ResultLevel::Error,
            Severity::Warning => ResultLevel::Warning,
            Severity::Info => ResultLevel::Note,
        };
        let mut text = diag.message.clone();
        if let Some(help) = &diag.help {
            text.push_str("\nhelp: ");
            text.push_str(help);
        }
        let related: Vec<Location> = diag
            .labels
            .iter()
            .map(|l| location(&l.location, Some(&l.message)))
            .collect();
        let primary = location(&diag.location, None);
        let result = SarifResult::builder()
            .rule_id(diag.code.clone())
            .level(level)
            .message(Message::builder().text(text).build())
            .locations(vec![primary]);
        let result = if related.is_empty() {
            result.build()
        } else {
            let mut built = result.build();
            built.related_locations = Some(related);
            built
        };
        results.push(result);
    }
    let driver = ToolComponent::builder()
        .name("deployfit")
        .version(env!("CARGO_PKG_VERSION"))
        .information_uri("https://github.com/deployfit/deployfit")
        .rules(rules.into_values().collect::<Vec<_>>())
        .build();
    let mut run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .build();
    // Our columns count characters, not SARIF's default UTF-16 code units.
    run.column_kind = Some(serde_json::json!("unicodeCodePoints"));
    let sarif = Sarif::builder()
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut text = serde_json::to_string_pretty(&sarif).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::uri;
    use std::path::Path;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(
            uri(Path::new("examples/chat.deploy")),
            "examples/chat.deploy"
        );
        assert_eq!(
            uri(Path::new("my dir/é #1?.deploy")),
            "my%20dir/%C3%A9%20%231%3F.deploy"
        );
        assert_eq!(
            uri(Path::new("/tmp/a b.deploy")),
            "file:///tmp/a%20b.deploy"
        );
        assert_eq!(uri(Path::new("100%.deploy")), "100%25.deploy");
    }
}
