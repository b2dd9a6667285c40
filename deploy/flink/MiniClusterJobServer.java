// Beam's Flink job server with a Flink MiniCluster in its own JVM: the
// embedded Flink of `make bench-flink`, one process like --flink-master=[local],
// but submitting to the cluster as to any Flink cluster.
//
// Why: with [local], Flink's LocalExecutor sets a DataSet job's parallelism
// to the task slots of the cluster it creates for the job, whatever the job
// asks for, so every partition of a stage runs at once. smoothanon sizes a
// Flink job's partitions from its input (pipeline.FlinkPartitions, decision
// 022) and runs them in waves over a fixed number of slots; that needs a
// cluster whose slots are set apart from the job.
//
// The cluster's configuration is FLINK_CONF_DIR's flink-conf.yaml (slots:
// taskmanager.numberOfTaskSlots; managed memory, unless
// taskmanager.memory.managed.size is set, taskmanager.memory.managed.fraction
// of the free heap, as Beam sets it for [local]); its REST endpoint binds a
// free port on the loopback interface. Arguments are FlinkJobServerDriver's, without
// --flink-master.
//
// Run in Java's source-file mode on the job server's classpath:
//   java -cp CLASSPATH deploy/flink/MiniClusterJobServer.java ARGS...

import java.net.URI;
import org.apache.beam.runners.flink.FlinkJobServerDriver;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.util.EnvironmentInformation;

public class MiniClusterJobServer {
  public static void main(String[] args) throws Exception {
    String dir = System.getenv("FLINK_CONF_DIR");
    if (dir == null || dir.isEmpty()) {
      throw new IllegalArgumentException("MiniClusterJobServer: set FLINK_CONF_DIR");
    }
    Configuration conf = GlobalConfiguration.loadConfiguration(dir);
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.set(RestOptions.ADDRESS, "127.0.0.1");
    conf.set(RestOptions.BIND_PORT, "0");
    if (!conf.contains(TaskManagerOptions.MANAGED_MEMORY_SIZE)) {
      // As Beam does for [local]: managed memory (sort and spill buffers)
      // is taskmanager.memory.managed.fraction of the free heap.
      long free = EnvironmentInformation.getSizeOfFreeHeapMemoryWithDefrag();
      float fraction = conf.get(TaskManagerOptions.MANAGED_MEMORY_FRACTION);
      conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, new MemorySize((long) (free * fraction)));
    }
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(conf.get(TaskManagerOptions.NUM_TASK_SLOTS))
                .build());
    cluster.start();
    URI rest = cluster.getRestAddress().get();
    System.err.println("MiniClusterJobServer: REST at " + rest);
    String[] all = java.util.Arrays.copyOf(args, args.length + 1);
    all[args.length] = "--flink-master=" + rest.getHost() + ":" + rest.getPort();
    FlinkJobServerDriver.fromConfig(FlinkJobServerDriver.parseArgs(all)).run();
  }
}
