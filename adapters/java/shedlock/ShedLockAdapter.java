// fencecheck's adapter for ShedLock (protocol 1, docs/adapter-protocol.md): JSON lines on
// stdin, replies on stdout, logs on stderr. One program per logical client, compiled with
// pom.xml's environment (ShedLock 7.10.1, spring-jdbc, the Postgres driver,
// spring-data-redis with Jedis, slf4j-simple to stderr, and fencecheck.Json/Protocol);
// ../jvm.sh execs a small JVM.
//
// ShedLock guards a Spring service's scheduled job: before a run of the job, the service
// asks its LockProvider for the job's lock; if it is taken the run is skipped, never
// waited for. So its violation is a job run twice at once. The provider, by argument:
//   jdbc         JdbcTemplateLockProvider on the run's Postgres, table shedlock; lock_until
//                and the comparison with it are the JVM's clock (ClockProvider.now()):
//                shedlock-jdbc.adapter.json
//   jdbc-dbtime  the same with usingDbTime(): the server's CURRENT_TIMESTAMP decides
//                (shedlock-jdbc-dbtime.adapter.json)
//   redis        RedisLockProvider (spring-data-redis over Jedis) on the run's Redis:
//                SET NX PX of key job-lock:default:<name>
//                (shedlock-redis.adapter.json)
//
// As ShedLock's documentation says: LockConfiguration(now, name, lockAtMostFor,
// lockAtLeastFor), provider.lock(config) -> Optional<SimpleLock>, SimpleLock.unlock().
// Here name = the key, lockAtMostFor = the run's ttl_ms, lockAtLeastFor = 0 (so unlock
// ends the lease at once instead of keeping it to lockAtLeastFor; 0 is also what a job
// without the annotation's lockAtLeastFor gets). Renew is SimpleLock.extend(ttl, 0)
// (what KeepAliveLockProvider calls), sent only with --renew on.
//
// Choices, each for a reason:
// - acquire never waits, whatever wait_ms says: ShedLock has no wait, and a job whose lock
//   is taken is skipped. An empty Optional is "fail busy" at once. Retrying in the adapter
//   until wait_ms would be a lock its users do not run.
// - The provider and its connection are made in the background from init (warm()), not in
//   init's answer (init must not wait on a connection), and the database product is said,
//   not detected (JdbcTemplateLockProvider would otherwise ask the server what it is).
// - locked_by: ShedLock's default is the host name, and every program here runs on one
//   host. By default (--locked-by program) each program is named as a host of its own
//   ("<host>/<owner_prefix>"), as the instances of a deployed service are; the history's
//   owner is the adapter's own, one per hold ("<owner_prefix>-hN"). --locked-by host keeps
//   ShedLock's default, so that every program's unlock matches every other's row.
// - JDBC: one connection per program (a SingleConnectionDataSource, as the Postgres
//   clients keep a session each), dropped after any error so the next acquire connects
//   anew. pgjdbc's socketTimeout is command_timeout_ms rounded up to a second (its unit).
//   The table is made by the postgres backend at its start (backends/postgres/session.ts).
// - Redis: Jedis as Spring Boot configures it (connect and read timeouts =
//   command_timeout_ms, a pool). Not Lettuce, Boot's default: loading its netty and
//   reactor took 5 to 7 s per JVM with six starting on two cores, past the deadline of
//   the first acquire (see pom.xml).
// - Definite outcomes: an empty Optional (the row or key was someone else's) is "fail
//   busy"; no connection could be made (nothing was sent) is "fail conn-refused"; any
//   other exception is "error" (unknown). An acquire that ended in error is not cleared:
//   ShedLock keeps no watchdog, so whatever it took ends at lockAtMostFor by itself.
// - release: unlock() returns nothing (JDBC's UPDATE count and Redis' DEL answer are
//   dropped inside ShedLock). The adapter says released:false, lost "lease-expired", when
//   more than ttl_ms of its own monotonic clock has passed since the acquire's answer
//   (the lease it was granted had run out, whatever the unlock then did); otherwise
//   released:true. Note that the Redis provider's unlock is a DEL that does not check the
//   value (its safeUpdate is off by default), and its extend a SET XX likewise; with
//   --safe-update (not in a shipped manifest) both compare the value in a Lua script.
import static fencecheck.Protocol.*;

import fencecheck.Json;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import net.javacrumbs.shedlock.provider.sql.DatabaseProduct;
import net.javacrumbs.shedlock.support.Utils;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.CannotCreateTransactionException;
import redis.clients.jedis.exceptions.JedisConnectionException;

public final class ShedLockAdapter implements LockHandler {
  static final String LIBRARY_VERSION = jarVersion("shedlock-core");
  static final List<String> PROVIDERS = List.of("jdbc", "jdbc-dbtime", "redis");

  static void log(String s) {
    System.err.println("[shedlock-adapter] " + s);
    System.err.flush();
  }

  /**
   * Whether anything in t's causes says no connection could be made, so nothing was sent:
   * the transaction ShedLock's JDBC provider opens around each statement could not get its
   * connection (CannotCreateTransactionException), or Jedis could not open its socket
   * ("Failed to connect to host:port", said before any command; any other
   * JedisConnectionException may be a command cut off mid-way: unknown).
   */
  static boolean neverConnected(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof CannotGetJdbcConnectionException || c instanceof CannotCreateTransactionException) return true;
      // Jedis keeps no cause: its socket factory's words are all that says the connect failed.
      if (c instanceof JedisConnectionException && String.valueOf(c.getMessage()).startsWith("Failed to connect to")) return true;
    }
    return false;
  }

  /** A hold: the lock ShedLock gave, and when its grant was answered (System.nanoTime, which libfaketime leaves alone). */
  static final class Hold {
    SimpleLock lock;
    long grantedAtNanos;
    long ttlMs;

    Hold(SimpleLock lock, long grantedAtNanos, long ttlMs) {
      this.lock = lock;
      this.grantedAtNanos = grantedAtNanos;
      this.ttlMs = ttlMs;
    }
  }

  final String provider;
  final boolean lockedByHost;
  /** What init said (before it: the defaults init would take). */
  Init cfg = new Init("127.0.0.1", 0, "c", 30000, 3000);
  int holdCount = 0;
  final Map<String, Hold> holds = new HashMap<>();
  LockProvider lockProvider;
  SingleConnectionDataSource dataSource;
  JedisConnectionFactory redis;

  /** RedisLockProvider.Builder.safeUpdate: unlock and extend compare the key's value first (off by default). */
  final boolean safeUpdate;

  ShedLockAdapter(String provider, boolean lockedByHost, boolean safeUpdate) {
    this.provider = provider;
    this.lockedByHost = lockedByHost;
    this.safeUpdate = safeUpdate;
  }

  public static void main(String[] args) throws Exception {
    takeStdout();
    String provider = args.length > 0 ? args[0] : "";
    String lockedBy = "program";
    boolean safeUpdate = false;
    for (int i = 1; i < args.length; i++) {
      if (args[i].equals("--locked-by") && i + 1 < args.length) lockedBy = args[++i];
      else if (args[i].equals("--safe-update")) safeUpdate = true;
      else usage("unknown argument " + args[i]);
    }
    if (!PROVIDERS.contains(provider)) usage("the first argument must be the provider, one of " + PROVIDERS + ", not \"" + provider + "\"");
    if (!lockedBy.equals("program") && !lockedBy.equals("host")) usage("--locked-by must be program or host, not \"" + lockedBy + "\"");
    if (safeUpdate && !provider.equals("redis")) usage("--safe-update is the Redis provider's; the JDBC provider's unlock already names locked_by");
    serve(new ShedLockAdapter(provider, lockedBy.equals("host"), safeUpdate));
  }

  /** A manifest naming this program wrongly: say what, and exit 254 as fencecheck's own bad input does. */
  static void usage(String why) {
    System.err.println("shedlock adapter: " + why + " (usage: ShedLockAdapter jdbc|jdbc-dbtime|redis [--locked-by program|host] [--safe-update])");
    System.exit(254);
  }

  public Map<String, Object> init(Object id, Map<String, Object> req) {
    cfg = Init.of(req, provider.equals("redis") ? 6379 : 5432);
    log("init: JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms; " + library() + "; lockAtMostFor " + cfg.ttlMs() + " ms, command timeout " + cfg.commandTimeoutMs() + " ms");
    warm();
    return initOk(id, false, "explicit", library());
  }

  String library() {
    switch (provider) {
      case "jdbc": return "ShedLock " + LIBRARY_VERSION + " JdbcTemplateLockProvider (JVM clock) on spring-jdbc " + jarVersion("spring-jdbc") + ", pgjdbc " + jarVersion("postgresql");
      case "jdbc-dbtime": return "ShedLock " + LIBRARY_VERSION + " JdbcTemplateLockProvider usingDbTime() on spring-jdbc " + jarVersion("spring-jdbc") + ", pgjdbc " + jarVersion("postgresql");
      default: return "ShedLock " + LIBRARY_VERSION + " RedisLockProvider" + (safeUpdate ? " (safeUpdate)" : "") + " on spring-data-redis " + jarVersion("spring-data-redis") + ", Jedis " + jarVersion("jedis");
    }
  }

  /** The host name ShedLock would write, or this program's own when each program stands for a host. */
  String lockedBy() {
    return lockedByHost ? Utils.getHostname() : Utils.getHostname() + "/" + cfg.ownerPrefix();
  }

  /**
   * The provider: the one warm() made in the background since init, or, if that failed,
   * one made now. Synchronized with warm(): made once.
   */
  synchronized LockProvider provider() {
    if (lockProvider != null) return lockProvider;
    long t0 = System.nanoTime();
    if (provider.equals("redis")) {
      // As Spring Boot configures it from spring.data.redis.timeout and connect-timeout; its pool (8 at most) as Boot's.
      JedisClientConfiguration cc = JedisClientConfiguration.builder()
          .connectTimeout(Duration.ofMillis(cfg.commandTimeoutMs()))
          .readTimeout(Duration.ofMillis(cfg.commandTimeoutMs()))
          .usePooling()
          .build();
      redis = new JedisConnectionFactory(new RedisStandaloneConfiguration(cfg.host(), cfg.port()), cc);
      redis.afterPropertiesSet();
      redis.start();
      lockProvider = new RedisLockProvider.Builder(redis).safeUpdate(safeUpdate).build();
    } else {
      Properties p = new Properties();
      // The run's own server: trust authentication, the superuser, the table in public
      // (backends/postgres/session.ts RUNS_OWN); its application name lets the teardown end its sessions.
      p.setProperty("user", "postgres");
      p.setProperty("ApplicationName", "fencecheck");
      p.setProperty("connectTimeout", String.valueOf(Math.max(1, (cfg.commandTimeoutMs() + 999) / 1000)));
      p.setProperty("socketTimeout", String.valueOf(Math.max(1, (cfg.commandTimeoutMs() + 999) / 1000)));
      p.setProperty("tcpKeepAlive", "true");
      dataSource = new SingleConnectionDataSource();
      dataSource.setDriverClassName("org.postgresql.Driver");
      dataSource.setUrl("jdbc:postgresql://" + cfg.host() + ":" + cfg.port() + "/postgres");
      dataSource.setConnectionProperties(p);
      dataSource.setSuppressClose(true);
      JdbcTemplateLockProvider.Configuration.Builder b = JdbcTemplateLockProvider.Configuration.builder()
          .withJdbcTemplate(new JdbcTemplate(dataSource))
          .withTableName("shedlock")
          // What detection would find, said so that nothing asks the server before the first acquire.
          .withDatabaseProduct(DatabaseProduct.POSTGRES_SQL)
          .withLockedByValue(lockedBy());
      // usingDbTime() writes the server's UTC time itself (and refuses a time zone besides);
      // by the JVM's clock, the README's advice for a TIMESTAMP column: one zone for every writer.
      if (provider.equals("jdbc-dbtime")) b.usingDbTime();
      else b.forceUtcTimeZone();
      lockProvider = new JdbcTemplateLockProvider(b.build());
    }
    log("provider made in " + (System.nanoTime() - t0) / 1_000_000 + " ms (JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms), locked_by " + (provider.equals("redis") ? "in the key's value" : lockedBy()));
    return lockProvider;
  }

  /**
   * Made at init, on a thread of its own: the provider and one connection, so that the
   * first acquire does not pay for loading Spring and the driver (about 1 s alone, several
   * with six JVMs starting on two cores, near fencecheck's deadline for an acquire). The
   * protocol allows connecting in the background; init itself answers at once. A failure
   * here is only logged: the first acquire connects again and answers for it.
   */
  void warm() {
    Thread t = new Thread(() -> {
      try {
        provider();
        if (redis != null) {
          try (var c = redis.getConnection()) {
            c.ping();
          }
        } else {
          dataSource.getConnection();
        }
        log("connected in the background (JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms)");
      } catch (Throwable e) {
        dropConnection();
        log("connecting in the background: " + shortError(e));
      }
    }, "warm");
    t.setDaemon(true);
    t.start();
  }

  /** After an error the JDBC connection may be broken or mid-transaction: the next use connects anew. */
  void dropConnection() {
    if (dataSource != null) {
      try {
        dataSource.resetConnection();
      } catch (Throwable t) {
        log("dropping the connection: " + shortError(t));
      }
    }
  }

  public void shutdown() {
    try {
      if (dataSource != null) dataSource.destroy();
      if (redis != null) redis.destroy();
    } catch (Throwable t) {
      log("shutdown: " + shortError(t));
    }
  }

  /** An exception from ShedLock: definite when nothing could have been sent, unknown otherwise. */
  Map<String, Object> failed(Object id, String what, Throwable e) {
    dropConnection();
    log(what + ": " + shortError(e));
    if (neverConnected(e)) return replyWith(id, "fail", "error", "conn-refused");
    return replyWith(id, "error", "error", shortError(e));
  }

  public Map<String, Object> acquire(Object id, Map<String, Object> req) {
    String key = String.valueOf(req.get("key"));
    long ttl = Json.num(req.get("ttl_ms"), cfg.ttlMs());
    Optional<SimpleLock> got;
    try {
      got = provider().lock(new LockConfiguration(ClockProvider.now(), key, Duration.ofMillis(ttl), Duration.ZERO));
    } catch (Throwable e) {
      return failed(id, "acquire " + key, e);
    }
    // ShedLock never waits: taken is taken, whatever wait_ms allowed.
    if (got.isEmpty()) return replyWith(id, "fail", "error", "busy");
    String owner = cfg.ownerPrefix() + "-h" + (++holdCount);
    holds.put(owner, new Hold(got.get(), System.nanoTime(), ttl));
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", owner);
    r.put("fence", null);
    return r;
  }

  public Map<String, Object> renew(Object id, Map<String, Object> req) {
    String owner = String.valueOf(req.get("owner"));
    long ttl = Json.num(req.get("ttl_ms"), cfg.ttlMs());
    Hold h = holds.get(owner);
    if (h == null) return replyWith(id, "fail", "error", "not-owner");
    Optional<SimpleLock> extended;
    try {
      extended = h.lock.extend(Duration.ofMillis(ttl), Duration.ZERO);
    } catch (Throwable e) {
      // extend() spends the old SimpleLock whatever happened: this hold can be neither renewed nor released again.
      holds.remove(owner);
      return failed(id, "extend " + owner, e);
    }
    if (extended.isEmpty()) {
      holds.remove(owner);
      return replyWith(id, "fail", "error", "not-owner");
    }
    h.lock = extended.get();
    h.grantedAtNanos = System.nanoTime();
    h.ttlMs = ttl;
    return replyWith(id, "ok", "ttl_ms", ttl);
  }

  public Map<String, Object> release(Object id, Map<String, Object> req) {
    String owner = String.valueOf(req.get("owner"));
    Hold h = holds.remove(owner);
    if (h == null) return replyWith(id, "fail", "error", "not-owner");
    long heldMs = (System.nanoTime() - h.grantedAtNanos) / 1_000_000;
    try {
      h.lock.unlock();
    } catch (Throwable e) {
      return failed(id, "unlock " + owner, e);
    }
    Map<String, Object> r = reply(id, "ok");
    if (heldMs > h.ttlMs) {
      r.put("released", false);
      r.put("lost", "lease-expired");
    } else {
      r.put("released", true);
    }
    return r;
  }
}
