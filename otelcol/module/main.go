// fencecheck's OpenTelemetry Collector: the few components its tests put
// between the SDK and `fencecheck traces` (the OTLP receiver, the batch
// processor, the OTLP/HTTP exporter and contrib's file exporter), and nothing
// else. It is our own main module because `go install` refuses otelcorecol (its
// go.mod has replace directives); the collector's builder would write the same
// few lines. Every collector module is pinned in go.mod to release v0.161.0 (the
// stable-numbered core modules to that release's v1.67.0).
package main

import (
	"fmt"
	"os"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

// version is what `--version` says; the release of the modules it is built from.
const version = "0.161.0"

func factories() (otelcol.Factories, error) {
	var f otelcol.Factories
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap(otlpreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap(batchprocessor.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap(otlphttpexporter.NewFactory(), fileexporter.NewFactory()); err != nil {
		return f, err
	}
	// The collector's own telemetry (its logs; its metrics, which the config
	// fencecheck writes turns off so that nothing listens on port 8888).
	f.Telemetry = otelconftelemetry.NewFactory()
	return f, nil
}

func main() {
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "fencecheck-otelcol", Description: "fencecheck's OpenTelemetry Collector", Version: version},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
			},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
