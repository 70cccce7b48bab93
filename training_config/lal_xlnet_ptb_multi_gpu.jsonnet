// Label attention parser, LAL paper's best English setting (`lal_xlnet_ptb.jsonnet`) trained
// with allennlp's distributed data parallelism (torch DDP over nccl) on the 4 GPUs of one
// machine. Each worker reads its share of the treebank in batches of 100 / 4 = 25 sentences, so
// one optimizer step still sees 100 sentences (gradients are averaged over the workers) and the
// learning rate schedule keeps its meaning; the EVALB metric sums its counts over the workers,
// so dev F1 is that of the whole dev set. Another number of GPUs: change `gpus` (keep 100
// divisible by it), or override
//   -o '{"distributed.cuda_devices": [0, 1], "data_loader.batch_sampler.batch_size": 50,
//        "validation_data_loader.batch_sampler.batch_size": 50}'
//   PTB_TRAIN, PTB_DEV, TRANSFORMER_MODEL as in lal_xlnet_ptb.jsonnet
local single_gpu = import 'lal_xlnet_ptb.jsonnet';
local gpus = 4;
local batch_size = 100;

single_gpu + {
  distributed: { cuda_devices: std.range(0, gpus - 1) },
  data_loader+: { batch_sampler+: { batch_size: batch_size / gpus } },
  validation_data_loader+: { batch_sampler+: { batch_size: batch_size / gpus } },
}
