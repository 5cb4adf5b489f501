package io.warpdata.daemon.cli;

import io.warpdata.daemon.publish.PublishProgress;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

import java.io.PrintStream;

/** Publish progress as a progress bar on stderr, one bar per phase. */
final class TerminalProgress implements PublishProgress {
    private final PrintStream err;
    private volatile ProgressBar bar;

    TerminalProgress(PrintStream err) {
        this.err = err;
    }

    @Override
    public synchronized void start(String task, long totalBytes) {
        finish();
        bar = new ProgressBarBuilder()
                .setTaskName(task)
                .setInitialMax(Math.max(1, totalBytes))
                .setUnit(totalBytes < (16L << 20) ? "KiB" : "MiB", totalBytes < (16L << 20) ? 1 << 10 : 1 << 20)
                .setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(250)
                .setConsumer(new ConsoleProgressBarConsumer(err))
                .build();
    }

    @Override
    public void advance(long bytes) {
        ProgressBar b = bar;
        if (b != null) {
            b.stepBy(bytes);
        }
    }

    @Override
    public synchronized void note(String text) {
        finish();
        err.println(text);
    }

    @Override
    public synchronized void finish() {
        if (bar != null) {
            bar.close();
            bar = null;
        }
    }
}
