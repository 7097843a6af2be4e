"""A small agent instrumented as an application would be: OpenTelemetry's SDK, its OTLP/HTTP
exporter and ``opentelemetry-instrumentation-openai-v2`` around the openai SDK. Run with the
``.venv-otel-app`` interpreter (``make otel-app``), never imported by the tests' own venv.

Configured only by the standard variables: ``OPENAI_BASE_URL`` (a local OpenAI-compatible
server), ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS`` and
``OTEL_EXPORTER_OTLP_TRACES_COMPRESSION`` (assay serve, its token, gzip), ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` and
``OTEL_SEMCONV_STABILITY_OPT_IN`` (content capture). It asks a question; the model calls a tool;
the app runs the tool and asks again with its result; the model answers. Prints the trace id.
"""

from __future__ import annotations

import json
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]


def weather(city: str) -> dict:
    return {"city": city, "sky": "sunny", "celsius": 21}


def main(question: str) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    import openai  # after instrument(): the client's calls are wrapped

    client = openai.OpenAI(api_key="test-key", max_retries=0)
    tracer = provider.get_tracer("weather-agent")
    with tracer.start_as_current_span("invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}
                                      ) as root:
        messages: list[dict] = [{"role": "system", "content": "Answer in one sentence."},
                                {"role": "user", "content": question}]
        first = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        messages.append(first.choices[0].message.model_dump(exclude_none=True))
        result = weather(**json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
        print(format(root.get_span_context().trace_id, "032x"))
    provider.shutdown()  # flushes the batch to assay serve


if __name__ == "__main__":
    main(sys.argv[1])
