//! `--format sarif`: SARIF 2.1.0 through serde-sarif's typed model.

use std::collections::BTreeMap;

use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation, Region,
    ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif, Tool, ToolComponent,
};

use crate::diagnostics::codes::CODES;
use crate::diagnostics::{Location as Place, Report, Severity};

fn location(place: &Place, message: Option<&str>) -> Location {
    let region = Region::builder()
        .start_line(place.line as i64)
        .start_column(place.column as i64)
        .end_line(place.end_line as i64)
        .end_column(place.end_column as i64)
        .build();
    let physical = PhysicalLocation::builder()
        .artifact_location(
            ArtifactLocation::builder()
                .uri(place.file.to_string_lossy().replace('\\', "/"))
                .build(),
        )
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

pub fn render(report: &Report<'_>) -> String {
    let mut rules: BTreeMap<String, ReportingDescriptor> = BTreeMap::new();
    let mut results = Vec::new();
    for diag in report.diagnostics {
        let summary = CODES
            .iter()
            .find(|(code, _)| *code == diag.code)
            .map(|(_, text)| text.to_string())
            .unwrap_or_else(|| format!("rule {}", diag.code));
        rules.entry(diag.code.clone()).or_insert_with(|| {
            ReportingDescriptor::builder()
                .id(diag.code.clone())
                .short_description(MultiformatMessageString::builder().text(summary).build())
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
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .build();
    let sarif = Sarif::builder()
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut text = serde_json::to_string_pretty(&sarif).unwrap_or_default();
    text.push('\n');
    text
}
