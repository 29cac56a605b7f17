//! Who mcplite is to OpenTelemetry: its instrumentation scope (name,
//! version, schema URL) and the resource of its spans and metrics. Read by
//! the configuration (the scope switches), the span recorder and the metrics
//! recorder; depends on none of them.

use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::resource::TelemetryResourceDetector;
use opentelemetry_sdk::Resource;

/// The instrumentation scope of mcplite's spans and metrics.
pub const SCOPE_NAME: &str = "r.package.mcplite";
/// The R package name (matched by the scope switches too).
pub(crate) const SCOPE_PACKAGE: &str = "mcplite";

/// Schema URL of the semantic conventions mcplite follows: the OpenTelemetry
/// MCP conventions, maintained with the GenAI conventions (development
/// channel).
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev";

/// The instrumentation scope, with version and schema URL.
pub(crate) fn scope() -> InstrumentationScope {
    InstrumentationScope::builder(SCOPE_NAME)
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url(SCHEMA_URL)
        .build()
}

/// The resource: `service.name`, the `OTEL_RESOURCE_ATTRIBUTES` pairs and
/// the SDK's `telemetry.sdk.*` attributes.
pub(crate) fn resource(service_name: &str, attributes: &[(String, String)]) -> Resource {
    Resource::builder_empty()
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_attributes(attributes.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())))
        .with_service_name(service_name.to_string())
        .build()
}
