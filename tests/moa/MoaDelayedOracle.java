import com.yahoo.labs.samoa.instances.Instance;
import java.io.PrintStream;
import java.util.LinkedList;
import moa.classifiers.Classifier;
import moa.core.Example;
import moa.core.InstanceExample;
import moa.core.Measurement;
import moa.evaluation.BasicClassificationPerformanceEvaluator;
import moa.evaluation.FadingFactorClassificationPerformanceEvaluator;
import moa.options.ClassOption;
import moa.streams.ArffFileStream;
import moa.tasks.FailedTaskReport;
import moa.tasks.MainTask;
import moa.tasks.NullMonitor;

/**
 * MOA's runs for the parity tests, several in one Java process (a JVM's start costs about a
 * second). Usage: MoaDelayedOracle JOB..., where a JOB is either
 *   task CLI             a MOA task as moa.DoTask takes it (its -d FILE dumps its rows), or
 *   faded ARFF DELAY ALPHA LEARNER OUT
 *                        MOA's delayed prequential loop (EvaluatePrequentialDelayed with no
 *                        initial window: each instance joins the training queue, the queue's
 *                        head is learned once more than DELAY wait, then the instance is
 *                        tested) around MOA's FadingFactorClassificationPerformanceEvaluator,
 *                        built in code: MOA's command line cannot build it (its -a clashes
 *                        with its parent's -a). ALPHA 0: the basic evaluator, which checks this
 *                        loop against MOA's own task. Writes to OUT, per instance, its number
 *                        and the evaluator's measurements, comma-separated.
 */
public class MoaDelayedOracle {
    public static void main(String[] args) throws Exception {
        int i = 0;
        while (i < args.length) {
            if (args[i].equals("task")) {
                task(args[i + 1]);
                i += 2;
            } else if (args[i].equals("faded")) {
                try (PrintStream out = new PrintStream(args[i + 5])) {
                    faded(args[i + 1], Integer.parseInt(args[i + 2]),
                          Double.parseDouble(args[i + 3]), args[i + 4], out);
                }
                i += 6;
            } else {
                throw new IllegalArgumentException("not a job: " + args[i]);
            }
        }
    }

    static void task(String cli) throws Exception {
        MainTask task = (MainTask) ClassOption.cliStringToObject(cli, MainTask.class, null);
        Object result = task.doTask(new NullMonitor(), null);
        if (result instanceof FailedTaskReport) {
            throw new RuntimeException(((FailedTaskReport) result).getFailureReason());
        }
    }

    static void faded(String arff, int delay, double alpha, String learnerCli, PrintStream out)
            throws Exception {
        ArffFileStream stream = new ArffFileStream(arff, -1);
        stream.prepareForUse();
        Classifier learner =
            (Classifier) ClassOption.cliStringToObject(learnerCli, Classifier.class, null);
        learner.setModelContext(stream.getHeader());
        learner.prepareForUse();
        BasicClassificationPerformanceEvaluator evaluator;
        if (alpha > 0) {
            FadingFactorClassificationPerformanceEvaluator fading =
                new FadingFactorClassificationPerformanceEvaluator();
            fading.alphaOption.setValue(alpha);
            evaluator = fading;
        } else {
            evaluator = new BasicClassificationPerformanceEvaluator();
        }
        evaluator.reset();
        LinkedList<Example<Instance>> waiting = new LinkedList<>();
        long seen = 0;
        while (stream.hasMoreInstances()) {
            Example<Instance> example = stream.nextInstance();
            seen++;
            waiting.addLast(example);
            if (delay < waiting.size()) {
                learner.trainOnInstance(waiting.removeFirst());
            }
            Instance unlabelled = example.getData().copy();
            unlabelled.setMissing(unlabelled.classAttribute());
            unlabelled.setClassValue(0.0);
            double[] votes = learner.getVotesForInstance(new InstanceExample(unlabelled));
            evaluator.addResult(example, votes);
            StringBuilder row = new StringBuilder(Long.toString(seen));
            for (Measurement m : evaluator.getPerformanceMeasurements()) {
                row.append(',').append(m.getValue());
            }
            out.println(row);
        }
    }
}
