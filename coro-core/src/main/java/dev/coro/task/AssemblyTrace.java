package dev.coro.task;

import java.util.ArrayList;
import java.util.List;

/**
 * The async stack trace of an error, in {@linkplain CoroDebug debug mode}: where the task steps it
 * passed through were built. An error thrown inside a task reports the thread that ran the step (a
 * pool worker) and not the user code that composed the chain; so, while debug mode is on, every
 * task node remembers the user frame that built it ({@code Task.map}, {@code flatMap}, {@code then},
 * {@code fromCallable}, {@code failure}, {@code recover}, ...), and an error that leaves a step
 * carries one suppressed {@code AssemblyTrace} listing those frames as its stack trace:
 *
 * <pre>
 * java.lang.IllegalStateException: no such order
 *     at ...                                   (the worker's stack)
 *     Suppressed: dev.coro.task.AssemblyTrace: assembly sites of the task steps this error passed through, innermost first
 *         at com.example.Orders.lookup(Orders.java:41)
 *         at com.example.Orders.price(Orders.java:30)
 *         at com.example.Checkout.total(Checkout.java:18)
 * </pre>
 *
 * <p>The trace is attached once per error: an error that travels on through other chains (a joined
 * task, a spawned child, a rethrow) gains their sites in the same trace, each site once, at most
 * {@link #MAX_SITES} of them. A site is the innermost frame of user code (outside Coro's own classes
 * and the JDK's) when the node was built; when the error leaves a run, the site that started the run
 * ({@link Task#join}, {@link Task#start}, {@link Scope#spawn}) follows the run's steps. Only errors
 * travel with a trace: a value or a cancellation never does. An error whose
 * suppression is disabled (see {@link Throwable#Throwable(String, Throwable, boolean, boolean)}) gets
 * none. With debug mode off, no node records a site and no trace is ever attached.
 *
 * <p>Thread-safe: the same error may pass through fibers on several threads at once.
 */
public final class AssemblyTrace extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The most sites a trace lists; later ones are dropped. */
    public static final int MAX_SITES = 32;

    /** Serializes attaching a trace to an error, so that an error gets exactly one. */
    private static final Object ATTACH = new Object();

    /** The sites so far, innermost first; guarded by this. */
    private final ArrayList<StackTraceElement> sites = new ArrayList<>();

    private AssemblyTrace() {
        super("assembly sites of the task steps this error passed through, innermost first", null, false, true);
    }

    /** The trace attached to {@code error}, attaching a new one if it has none. */
    static AssemblyTrace of(Throwable error) {
        synchronized (ATTACH) {
            for (Throwable s : error.getSuppressed()) {
                if (s instanceof AssemblyTrace t) {
                    return t;
                }
            }
            AssemblyTrace t = new AssemblyTrace();
            error.addSuppressed(t);
            return t;
        }
    }

    /** Adds a site unless it is listed already or the trace is full. */
    synchronized void add(StackTraceElement site) {
        if (sites.size() < MAX_SITES && !sites.contains(site)) {
            sites.add(site);
            setStackTrace(sites.toArray(StackTraceElement[]::new));
        }
    }

    /**
     * Returns the sites so far, innermost first: the user frames that built the task steps the error
     * passed through, each once.
     *
     * @return an immutable snapshot of the sites
     */
    public synchronized List<StackTraceElement> sites() {
        return List.copyOf(sites);
    }

    /**
     * Records nothing: the trace's stack is its list of sites, not where it was created.
     *
     * @return this trace
     */
    @Override
    public Throwable fillInStackTrace() {
        return this;
    }
}
