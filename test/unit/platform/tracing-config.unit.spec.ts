import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../services/platform/config.ts';

const problemsOf = (env: NodeJS.ProcessEnv): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('tracing configuration: the OTEL_* variables (unit)', () => {
  it('is off without an OTLP endpoint', () => {
    expect(loadConfig({}).tracing).to.equal(null);
    expect(loadConfig({ OTEL_SERVICE_NAME: 'svc-keys', OTEL_EXPORTER_OTLP_ENDPOINT: '' }).tracing).to.equal(null);
  });

  it('appends /v1/traces to the general endpoint and takes the traces endpoint as given', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).to.deep.equal({
      serviceName: 'svc',
      url: 'http://collector:4318/v1/traces',
      sampler: { name: 'parentbased_always_on', ratio: 1 },
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/custom',
        OTEL_SERVICE_NAME: 'svc-billing',
      }).tracing,
    ).to.include({ url: 'https://traces.example/custom', serviceName: 'svc-billing' });
  });

  it('lets OTEL_SDK_DISABLED=true (any case) and OTEL_TRACES_EXPORTER=none win over an endpoint', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).tracing).to.equal(null);
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).to.equal(null);
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'false' }).tracing).not.to.equal(null);
  });

  it('reads the sampler and its ratio', () => {
    const tracing = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).tracing;
    expect(tracing?.sampler).to.deep.equal({ name: 'parentbased_traceidratio', ratio: 0.25 });
  });

  it('names each bad variable with what it must be', () => {
    const problems = problemsOf({
      OTEL_SDK_DISABLED: 'yes',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_TRACES_SAMPLER: 'sometimes',
      OTEL_TRACES_SAMPLER_ARG: '2',
      OTEL_TRACES_EXPORTER: 'jaeger',
    });
    for (const name of [
      'OTEL_SDK_DISABLED: must be true or false',
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an absolute http:// or https:// URL',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http:// or https:// URL',
      'OTEL_EXPORTER_OTLP_PROTOCOL: must be http/json',
      'OTEL_TRACES_SAMPLER: must be one of',
      'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1',
      'OTEL_TRACES_EXPORTER: must be otlp or none',
    ]) {
      expect(
        problems.some((p) => p.startsWith(name)),
        `${name} in ${JSON.stringify(problems)}`,
      ).to.equal(true);
    }
    expect(problemsOf({ OTEL_TRACES_EXPORTER: 'otlp' })).to.deep.equal([
      'OTEL_TRACES_EXPORTER: otlp needs OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    ]);
  });
});
