package io.warpdata.daemon.warpd;

import io.warpdata.blobcache.mirror.MirrorSpec;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --mirror}, {@code WARP_MIRRORS}, the {@code mirror} key and {@code --mirror-timeout}: parsed and checked. */
class MirrorOptionsTest {
    private static final Path HOME = Path.of("/home/ada");
    private static final Map<String, String> BASE = Map.of("mount", "/warp", "remote", "s3://datasets/warp");

    private static DaemonConfig resolve(Map<String, String> cli, Properties file, Map<String, String> env) {
        Map<String, String> all = new java.util.HashMap<>(BASE);
        all.putAll(cli);
        return DaemonConfig.resolve(all, file, env, HOME, 1000);
    }

    @Test
    void noMirrorsByDefaultAndATwoSecondTimeout() {
        DaemonConfig c = resolve(Map.of(), new Properties(), Map.of());
        assertThat(c.mirrors()).isEmpty();
        assertThat(c.mirrorTimeout()).isEqualTo(Duration.ofSeconds(2)).isEqualTo(MirrorSpec.DEFAULT_TIMEOUT);
    }

    @Test
    void repeatedMirrorOptionsKeepTheirOrder() {
        CommandLine cl = WarpdCommand.commandLine();
        cl.parseArgs("--mount", "/warp", "--remote", "s3://datasets/warp", "--mirror", "http://rack7-cache:8080/warp",
                "--mirror", "s3://tier/warp?endpoint=http://minio.rack7:9000", "--mirror", "https://cdn.example.org/warp/",
                "--mirror-timeout", "750ms");
        WarpdCommand command = cl.getCommand();
        DaemonConfig c = DaemonConfig.resolve(command.cliOptions(), new Properties(), Map.of(), HOME, 1000);
        assertThat(c.mirrors()).containsExactly(
                new MirrorSpec.Http(URI.create("http://rack7-cache:8080/warp")),
                new MirrorSpec.S3("tier", "warp", Optional.of(URI.create("http://minio.rack7:9000")), Optional.empty()),
                new MirrorSpec.Http(URI.create("https://cdn.example.org/warp")));
        assertThat(c.mirrorTimeout()).isEqualTo(Duration.ofMillis(750));
    }

    @Test
    void environmentListIsReplacedByTheConfigFileWhichIsReplacedByTheCommandLine() {
        Map<String, String> env = Map.of("WARP_MIRRORS", "http://env-a/warp, http://env-b/warp", "WARP_MIRROR_TIMEOUT", "5s");
        assertThat(resolve(Map.of(), new Properties(), env).mirrors()).extracting(MirrorSpec::describe)
                .containsExactly("http://env-a/warp", "http://env-b/warp");
        assertThat(resolve(Map.of(), new Properties(), env).mirrorTimeout()).isEqualTo(Duration.ofSeconds(5));
        Properties file = new Properties();
        file.setProperty("mirror", "http://file/warp");
        file.setProperty("mirror-timeout", "1s");
        assertThat(resolve(Map.of(), file, env).mirrors()).extracting(MirrorSpec::describe).containsExactly("http://file/warp");
        assertThat(resolve(Map.of(), file, env).mirrorTimeout()).isEqualTo(Duration.ofSeconds(1));
        assertThat(resolve(Map.of("mirror", "http://cli/warp"), file, env).mirrors()).extracting(MirrorSpec::describe)
                .containsExactly("http://cli/warp");
    }

    @Test
    void theTiersOwnKeyPairComesFromItsOwnVariablesAndIsNeverShown() {
        DaemonConfig c = resolve(Map.of("mirror", "s3://tier/warp"), new Properties(),
                Map.of("WARP_MIRROR_AWS_ACCESS_KEY_ID", "AKIATIER", "WARP_MIRROR_AWS_SECRET_ACCESS_KEY", "tier-secret"));
        MirrorSpec.S3 tier = (MirrorSpec.S3) c.mirrors().getFirst();
        assertThat(tier.credentials()).isPresent();
        assertThat(tier.credentials().get().accessKeyId()).isEqualTo("AKIATIER");
        assertThat(tier.toString()).doesNotContain("tier-secret");
        assertThat(tier.describe()).doesNotContain("AKIATIER");
        assertThatThrownBy(() -> resolve(Map.of("mirror", "s3://tier/warp"), new Properties(),
                Map.of("WARP_MIRROR_AWS_ACCESS_KEY_ID", "AKIATIER")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("WARP_MIRROR_AWS_SECRET_ACCESS_KEY");
    }

    @Test
    void badMirrorsAreRefusedWithTheFormsThatWork() {
        for (String bad : new String[] {"ftp://cache/warp", "cache:8080/warp", "http://user:pw@cache/warp",
                "http://cache/warp?X-Amz-Signature=abc", "s3://tier/warp?profile=x", "s3://Bad_Bucket/warp"}) {
            assertThatThrownBy(() -> resolve(Map.of("mirror", bad), new Properties(), Map.of()))
                    .as(bad)
                    .isInstanceOf(ConfigException.class)
                    .hasMessageNotContaining("pw@")
                    .hasMessageNotContaining("X-Amz-Signature=abc")
                    .satisfies(e -> assertThat(((ConfigException) e).nextStep()).contains("--mirror http(s)://HOST[:PORT]/BASE")
                            .contains("s3://BUCKET/PREFIX"));
        }
    }

    /** audit 26: these mounted, then failed every read ("port out of range") as if the mirror were down. */
    @Test
    void aPortThatCannotExistIsRefusedAtStart() {
        for (String bad : new String[] {"http://127.0.0.1:99999/warp", "https://cache:0/warp",
                "s3://tier/warp?endpoint=http://127.0.0.1:99999"}) {
            assertThatThrownBy(() -> resolve(Map.of("mirror", bad), new Properties(), Map.of()))
                    .as(bad).isInstanceOf(ConfigException.class).hasMessageContaining("cannot exist (1 to 65535)");
        }
        assertThat(resolve(Map.of("mirror", "http://127.0.0.1:65535/warp"), new Properties(), Map.of()).mirrors()).hasSize(1);
    }

    /** audit 26: --mirror "$CACHE_URL" with the variable unset read from the store without a word. */
    @Test
    void anEmptyMirrorOnTheCommandLineIsRefused() {
        CommandLine cl = WarpdCommand.commandLine();
        cl.parseArgs("--mount", "/warp", "--remote", "s3://datasets/warp", "--mirror", "");
        WarpdCommand command = cl.getCommand();
        assertThatThrownBy(command::cliOptions).isInstanceOf(ConfigException.class)
                .hasMessageContaining("an empty --mirror")
                .satisfies(e -> assertThat(((ConfigException) e).nextStep()).contains("unset"));
    }

    /** audit 28: mirror = "" in a config file (a template whose variable was empty) was taken as no mirror. */
    @Test
    void anEmptyMirrorInTheConfigFileIsRefused() {
        for (String empty : new String[] {"", "\"\"", "''", "  "}) {
            Properties file = new Properties();
            file.setProperty("mirror", empty);
            assertThatThrownBy(() -> resolve(Map.of(), file, Map.of())).as("mirror = [%s]", empty)
                    .isInstanceOf(ConfigException.class).hasMessageContaining("mirror is empty");
        }
    }

    @Test
    void theStoreItselfOrTheSameMirrorTwiceIsRefused() {
        assertThatThrownBy(() -> resolve(Map.of("mirror", "s3://datasets/warp/"), new Properties(), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("is the store itself");
        assertThatThrownBy(() -> resolve(Map.of("mirror", "http://c/warp http://c/warp/"), new Properties(), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("given twice");
    }

    @Test
    void aMirrorTimeoutMustBeAPositiveDuration() {
        assertThatThrownBy(() -> resolve(Map.of("mirror-timeout", "soon"), new Properties(), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("bad duration")
                .satisfies(e -> assertThat(((ConfigException) e).nextStep()).as("audit 26: not 2m or 1h, which it refuses")
                        .contains("2s or 500ms", "at most 30s").doesNotContain("1h"));
        assertThatThrownBy(() -> resolve(Map.of("mirror-timeout", "0s"), new Properties(), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("must be more than 0");
        // Over one answer's ceiling: said in the option's own units, not Java's (PT10M).
        assertThatThrownBy(() -> resolve(Map.of("mirror-timeout", "10m"), new Properties(), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("at most 30s").hasMessageContaining("was 10m")
                .hasMessageNotContaining("PT");
        assertThatThrownBy(() -> WarpdCommand.commandLine().parseArgs("--mirror-timeout", "0s"))
                .isInstanceOf(CommandLine.ParameterException.class);
    }

    /** URL schemes are case-insensitive; a fragment is called one, and user info is never echoed. */
    @Test
    void mirrorUrlsAreReadAsUrlsAndRefusalsSayWhatIsWrong() {
        DaemonConfig c = resolve(Map.of("mirror", "HTTP://rack-cache:8080/warp S3://tier/p"), new Properties(), Map.of());
        assertThat(c.mirrors()).containsExactly(new MirrorSpec.Http(URI.create("http://rack-cache:8080/warp")),
                new MirrorSpec.S3("tier", "p", Optional.empty(), Optional.empty()));
        assertThatThrownBy(() -> resolve(Map.of("mirror", "http://cache:8080/warp#frag"), new Properties(), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("#***").hasMessageContaining("a fragment")
                .hasMessageNotContaining("?***");
        assertThatThrownBy(() -> resolve(Map.of("mirror", "http://bob:secret@cache:8080/warp"), new Properties(), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("'http://cache:8080': a mirror URL must not carry user info")
                .hasMessageNotContaining("secret");
    }

    /** Two tiers of one bucket name on two servers had one name: their metrics clashed and every scrape failed. */
    @Test
    void twoS3TiersOfOneBucketNameOnTwoServersAreNamedApart() {
        DaemonConfig c = resolve(Map.of("mirror", "s3://tier/p?endpoint=http://127.0.0.1:19499 s3://tier/p?endpoint=http://127.0.0.1:19418"),
                new Properties(), Map.of());
        assertThat(c.mirrors()).hasSize(2);
        List<String> names = c.mirrors().stream().map(m -> {
            try (var mirror = m.open(Duration.ofSeconds(2))) {
                return mirror.name();
            }
        }).toList();
        assertThat(names).doesNotHaveDuplicates().allSatisfy(n -> assertThat(n).startsWith("s3://tier/p"));
        assertThat(names.get(0)).contains("127.0.0.1:19499");
        assertThat(names.get(1)).contains("127.0.0.1:19418");
    }

    @Test
    void mirrorOptionsAreInTheHelpNowThatReadsUseThem() {
        String usage = WarpdCommand.commandLine().getUsageMessage();
        assertThat(usage).contains("--mirror=URL").contains("--mirror-timeout=DURATION").contains("WARP_MIRRORS");
    }
}
