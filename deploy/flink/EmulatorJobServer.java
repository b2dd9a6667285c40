// Beam's Flink job server with its gs:// filesystem pointed at a GCS
// emulator: GCS_ENDPOINT (e.g. http://10.77.0.5:4443/storage/v1/), no
// credentials. Arguments are FlinkJobServerDriver's.
//
// Why: with --artifacts-dir=gs://bucket/prefix the job server stages each
// job's artifacts (the Go worker binary) in the bucket and the TaskManagers
// fetch them from there, so no disk is shared. Against GCS itself nothing
// more is needed. The job server has no option for the storage endpoint
// (FlinkJobServerDriver.main: "TODO: Expose the fileSystem related
// options"), and the TaskManagers take theirs from the job's pipeline
// options, which the Go launcher cannot set: this driver sets it for its own
// filesystem and adds it to the options of every job it submits.
//
// Run in Java's source-file mode on the job server's classpath (cluster.sh
// jobserver): java -cp CLASSPATH deploy/flink/EmulatorJobServer.java ARGS...
// The imports name Beam's vendored gRPC and Guava packages of Beam 2.62;
// cluster.sh rewrites them to those on the classpath.

import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.runners.flink.FlinkJobInvoker;
import org.apache.beam.runners.flink.FlinkJobServerDriver;
import org.apache.beam.runners.jobsubmission.JobInvocation;
import org.apache.beam.sdk.extensions.gcp.auth.NoopCredentialFactory;
import org.apache.beam.sdk.extensions.gcp.options.GcsOptions;
import org.apache.beam.sdk.io.FileSystems;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.vendor.grpc.v1p60p1.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p60p1.com.google.protobuf.Value;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.ListeningExecutorService;

public class EmulatorJobServer {
  public static void main(String[] args) throws Exception {
    String endpoint = System.getenv("GCS_ENDPOINT");
    if (endpoint == null || endpoint.isEmpty()) {
      throw new IllegalArgumentException("EmulatorJobServer: set GCS_ENDPOINT");
    }
    GcsOptions options = PipelineOptionsFactory.create().as(GcsOptions.class);
    options.setGcsUploadBufferSizeBytes(1024 * 1024); // as FlinkJobServerDriver.main
    options.setGcsEndpoint(endpoint);
    options.setCredentialFactoryClass(NoopCredentialFactory.class);
    FileSystems.setDefaultPipelineOptions(options);
    FlinkJobServerDriver.FlinkServerConfiguration conf = FlinkJobServerDriver.parseArgs(args);
    FlinkJobServerDriver.fromConfig(conf, () -> new Invoker(conf, endpoint)).run();
  }

  /** A FlinkJobInvoker that adds the emulator to every job's options. */
  static class Invoker extends FlinkJobInvoker {
    private final String endpoint;

    Invoker(FlinkJobServerDriver.FlinkServerConfiguration conf, String endpoint) {
      super(conf);
      this.endpoint = endpoint;
    }

    @Override
    protected JobInvocation invokeWithExecutor(
        RunnerApi.Pipeline pipeline,
        Struct options,
        String retrievalToken,
        ListeningExecutorService executor) {
      Struct.Builder b = options.toBuilder();
      b.putFields("beam:option:gcs_endpoint:v1", Value.newBuilder().setStringValue(endpoint).build());
      b.putFields(
          "beam:option:credential_factory_class:v1",
          Value.newBuilder().setStringValue(NoopCredentialFactory.class.getName()).build());
      return super.invokeWithExecutor(pipeline, b.build(), retrievalToken, executor);
    }
  }
}
