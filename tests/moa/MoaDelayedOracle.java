import com.yahoo.labs.samoa.instances.Instance;
import java.util.LinkedList;
import moa.classifiers.Classifier;
import moa.core.Example;
import moa.core.InstanceExample;
import moa.core.Measurement;
import moa.evaluation.BasicClassificationPerformanceEvaluator;
import moa.evaluation.FadingFactorClassificationPerformanceEvaluator;
import moa.options.ClassOption;
import moa.streams.ArffFileStream;

/**
 * MOA's delayed prequential loop (EvaluatePrequentialDelayed with no initial window: each
 * instance joins the training queue, the queue's head is learned once more than DELAY wait,
 * then the instance is tested) around MOA's FadingFactorClassificationPerformanceEvaluator,
 * built in code: MOA's command line cannot build it (its -a clashes with its parent's -a).
 * Usage: MoaDelayedOracle FILE.arff DELAY ALPHA LEARNER (ALPHA 0: the basic evaluator, which
 * checks this loop against MOA's own task). Prints, per instance, its number and the
 * evaluator's measurements, comma-separated.
 */
public class MoaDelayedOracle {
    public static void main(String[] args) throws Exception {
        ArffFileStream stream = new ArffFileStream(args[0], -1);
        stream.prepareForUse();
        int delay = Integer.parseInt(args[1]);
        double alpha = Double.parseDouble(args[2]);
        Classifier learner =
            (Classifier) ClassOption.cliStringToObject(args[3], Classifier.class, null);
        learner.setModelContext(stream.getHeader());
        learner.prepareForUse();
        BasicClassificationPerformanceEvaluator evaluator;
        if (alpha > 0) {
            FadingFactorClassificationPerformanceEvaluator faded =
                new FadingFactorClassificationPerformanceEvaluator();
            faded.alphaOption.setValue(alpha);
            evaluator = faded;
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
            System.out.println(row);
        }
    }
}
