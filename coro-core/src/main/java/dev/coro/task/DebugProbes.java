package dev.coro.task;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.security.CodeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The debug mode's bookkeeping ({@link CoroDebug}): the registry of live fibers, the assembly site
 * of every task node, and the capture of sites from the stack. Loaded only when debug mode is on:
 * every call into it sits behind {@code if (CoroDebug.ENABLED)}, a constant the JIT folds away.
 *
 * <p>Both tables are weak in their keys (kotlinx's DebugProbes keeps a weak map too): a fiber that can
 * never be resumed (it waits on a gate nobody references any more) and a task description nobody
 * holds are collected as if the tables did not exist, and their entries are purged on the next
 * registration. A completed fiber is removed at once. Keys compare by identity (a fiber or a node is
 * never equal to another), through {@link WeakKey} and {@link Lookup}.
 */
final class DebugProbes {
    private DebugProbes() {}

    /** The most frames a creation site keeps. */
    static final int SITE_FRAMES = 12;

    /** What the registry knows of a live fiber. */
    static final class FiberInfo {
        final long id;
        /** The frames that started it, as walked (turned into elements only when asked), or null. */
        private final List<StackWalker.StackFrame> frames;
        /** System.nanoTime() when its current (or last) wait began; 0: it has not waited yet. */
        volatile long suspendedAt;
        /**
         * Its current (or last) suspension, for the dump: a settled one means it is running or
         * resuming. Kept here, in debug mode only, so that a fiber needs no field for it; weakly,
         * because the step references the fiber, which the registry must not keep alive.
         */
        volatile WeakReference<AsyncStep> step;

        /** Its current (or last) suspension, or null. */
        AsyncStep step() {
            WeakReference<AsyncStep> s = step;
            return s == null ? null : s.get();
        }

        FiberInfo(long id, List<StackWalker.StackFrame> frames) {
            this.id = id;
            this.frames = frames;
        }

        /** The creation site, innermost first, or null. */
        List<StackTraceElement> site() {
            return frames == null ? null : frames.stream().map(StackWalker.StackFrame::toStackTraceElement).toList();
        }

        /** The innermost user frame of the site (not the JDK's), or null: the run's assembly site. */
        StackTraceElement start() {
            return frames == null ? null : frames.stream().filter(f -> !jdk(f)).findFirst()
                    .map(StackWalker.StackFrame::toStackTraceElement).orElse(null);
        }
    }

    private static final AtomicLong IDS = new AtomicLong();
    private static final ReferenceQueue<Object> DEAD_FIBERS = new ReferenceQueue<>();
    private static final ReferenceQueue<Object> DEAD_NODES = new ReferenceQueue<>();
    /** Live fibers: WeakKey(fiber) to its info. */
    private static final ConcurrentHashMap<Object, FiberInfo> FIBERS = new ConcurrentHashMap<>();
    /** Task nodes built in debug mode: WeakKey(node) to the user frame that built it. */
    private static final ConcurrentHashMap<Object, StackWalker.StackFrame> SITES = new ConcurrentHashMap<>();

    // ---- fibers ----

    /** A fiber was created (in its constructor, on the starting thread). */
    static void created(Fiber<?> fiber) {
        purge(DEAD_FIBERS, FIBERS);
        FIBERS.put(new WeakKey(fiber, DEAD_FIBERS), new FiberInfo(IDS.incrementAndGet(), userFrames()));
    }

    /** The fiber is about to wait on {@code step} (it has built it). */
    static void suspending(Fiber<?> fiber, AsyncStep step) {
        FiberInfo info = FIBERS.get(new Lookup(fiber));
        if (info != null) {
            info.suspendedAt = System.nanoTime();
            info.step = new WeakReference<>(step); // weak: the step holds the fiber, the registry's weak key
        }
    }

    /**
     * The fiber completed: forget it. An error leaving it gains the site where the run was started
     * ({@code join}, {@code start}, {@code Scope.spawn}) as the outermost step of its trace.
     */
    static void finished(Fiber<?> fiber, boolean failed, Object error) {
        FiberInfo info = FIBERS.remove(new Lookup(fiber));
        if (failed && info != null && error instanceof Throwable t) {
            StackTraceElement start = info.start();
            if (start != null) {
                AssemblyTrace.of(t).add(start);
            }
        }
    }

    /** The registry's info on a fiber, or null. */
    static FiberInfo info(Completion fiber) {
        return FIBERS.get(new Lookup(fiber));
    }

    /** A snapshot of the live fibers and their infos. */
    static List<java.util.Map.Entry<Fiber<?>, FiberInfo>> fibers() {
        purge(DEAD_FIBERS, FIBERS);
        List<java.util.Map.Entry<Fiber<?>, FiberInfo>> out = new ArrayList<>();
        FIBERS.forEach((key, info) -> {
            Object f = ((WeakKey) key).get();
            if (f != null) {
                out.add(java.util.Map.entry((Fiber<?>) f, info));
            }
        });
        return out;
    }

    // ---- timers ----

    /** A delay's cancellation action in debug mode: cancels the timer, and tells the dump its deadline. */
    static final class TimerWait implements Runnable {
        final Cancellable timer;
        final Scheduler scheduler;
        /** On the scheduler's clock. */
        final long deadline;

        TimerWait(Cancellable timer, Scheduler scheduler, long delayNanos) {
            this.timer = timer;
            this.scheduler = scheduler;
            long now = scheduler.nanoTime();
            long d = now + delayNanos;
            this.deadline = ((now ^ d) & (delayNanos ^ d)) < 0 ? Long.MAX_VALUE : d; // saturate
        }

        @Override
        public void run() {
            timer.cancel();
        }

        Duration remaining() {
            return Duration.ofNanos(deadline - scheduler.nanoTime());
        }
    }

    /** {@code delay} in nanoseconds, saturated. */
    static long nanos(Duration delay) {
        try {
            return delay.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    // ---- assembly sites ----

    /** A task node was built (in its constructor): remember the user frame that built it. */
    static void assembled(Task<?> node) {
        StackWalker.StackFrame site = firstUserFrame();
        if (site != null) {
            purge(DEAD_NODES, SITES);
            SITES.put(new WeakKey(node, DEAD_NODES), site);
        }
    }

    /**
     * A frame made at run time for {@code node} (a range's or a repeat's counter) takes the node's
     * assembly site in place of its own (which would name whatever started the run).
     */
    static void madeFor(Task<?> frame, Task<?> node) {
        StackWalker.StackFrame site = SITES.get(new Lookup(node));
        if (site != null) {
            SITES.put(new WeakKey(frame, DEAD_NODES), site);
        } else {
            SITES.remove(new Lookup(frame));
        }
    }

    /**
     * An error passed through {@code node} (raised by it, or unwound through its frame): adds the
     * node's assembly site to the error's {@link AssemblyTrace}, attaching one first if it has none.
     */
    static void passed(Object error, Task<?> node) {
        StackWalker.StackFrame site = SITES.get(new Lookup(node));
        if (site != null && error instanceof Throwable t) {
            AssemblyTrace.of(t).add(site.toStackTraceElement());
        }
    }

    // ---- stack walking ----

    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);
    private static final CodeSource CORE = Task.class.getProtectionDomain().getCodeSource();
    /** Whether a class is Coro's own code or the JDK's reflection: frames a site leaves out. */
    private static final ClassValue<Boolean> HIDDEN = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            String name = type.getName();
            if (name.startsWith("java.lang.reflect.") || name.startsWith("java.lang.invoke.")
                    || name.startsWith("jdk.internal.reflect.") || name.startsWith("sun.reflect.")) {
                return true;
            }
            if (CORE == null || CORE.getLocation() == null) { // no code source: judge by the name
                return name.startsWith("dev.coro.") && type.getModule() == Task.class.getModule();
            }
            CodeSource cs = type.getProtectionDomain().getCodeSource();
            return cs != null && CORE.getLocation().equals(cs.getLocation());
        }
    };

    private static boolean hidden(StackWalker.StackFrame f) {
        return HIDDEN.get(f.getDeclaringClass());
    }

    /** Whether a frame is the JDK's own (a thread's run, a stream's pipeline): not the user's code. */
    private static boolean jdk(StackWalker.StackFrame f) {
        return jdk(f.getClassName());
    }

    private static boolean jdk(String name) {
        return name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jdk.")
                || name.startsWith("sun.") || name.startsWith("com.sun.");
    }

    /**
     * The innermost frame of user code: outside Coro and the JDK; null when there is none (a node Coro
     * builds itself while a task runs on a worker).
     */
    static StackWalker.StackFrame firstUserFrame() {
        return WALKER.walk(s -> s.filter(f -> !hidden(f) && !jdk(f)).findFirst().orElse(null));
    }

    /**
     * Up to {@link #SITE_FRAMES} frames outside Coro and the JDK's reflection, innermost first (the
     * JDK's other frames stay: they show the thread); null if none of them is user code (a run Coro
     * starts itself on a worker).
     */
    static List<StackWalker.StackFrame> userFrames() {
        return WALKER.walk(s -> {
            List<StackWalker.StackFrame> frames = new ArrayList<>(SITE_FRAMES);
            boolean user = false;
            for (var it = s.filter(f -> !hidden(f)).iterator(); it.hasNext() && frames.size() < SITE_FRAMES; ) {
                StackWalker.StackFrame f = it.next();
                user |= !jdk(f);
                frames.add(f);
            }
            return user ? List.copyOf(frames) : null;
        });
    }

    // ---- weak identity keys ----

    private static void purge(ReferenceQueue<Object> queue, ConcurrentHashMap<Object, ?> table) {
        for (Reference<?> r; (r = queue.poll()) != null; ) {
            table.remove(r); // by identity: the WeakKey itself is the key
        }
    }

    /** A table key: weak, hashed and compared by the referent's identity. */
    private static final class WeakKey extends WeakReference<Object> {
        private final int hash;

        WeakKey(Object referent, ReferenceQueue<Object> queue) {
            super(referent, queue);
            this.hash = System.identityHashCode(referent);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            if (o == this) {
                return true;
            }
            Object mine = get();
            return mine != null && (o instanceof WeakKey w ? w.get() == mine : o instanceof Lookup l && l.referent == mine);
        }
    }

    /** A probe for a table lookup: strong, short-lived, equal to the WeakKey of the same referent. */
    private record Lookup(Object referent) {
        @Override
        public int hashCode() {
            return System.identityHashCode(referent);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof WeakKey w ? w.get() == referent : o instanceof Lookup l && l.referent == referent;
        }
    }
}
