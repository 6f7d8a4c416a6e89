"""Writes ppo_loss.json: the PPO loss of rl.Loss and its gradient with
respect to logits and values, computed by PyTorch autograd in float64 on
fixed random data (CleanRL's ppo.py loss with masked logits).

    python3 make_reference.py   # in rl/testdata
"""
import json

import torch

torch.manual_seed(0)
B, P = 32, 7
clip, vclip, vcoef, ecoef = 0.2, 0.3, 0.5, 0.03

legal = torch.rand(B, P) < 0.7
action = torch.zeros(B, dtype=torch.long)
for i in range(B):
    legal[i, i % P] = True
    idx = legal[i].nonzero().flatten()
    action[i] = idx[torch.randint(len(idx), (1,))]
# Inputs rounded to float32, as the Go side stores them.
f32 = lambda t: t.float().double()
logits = f32(2 * torch.randn(B, P)).requires_grad_()
values = f32(torch.rand(B) * 2 - 1).requires_grad_()
old_value = f32(torch.rand(B) * 2 - 1)
ret = f32(torch.rand(B) * 2 - 1)
adv = f32(torch.randn(B))

masked = torch.where(legal, logits, torch.tensor(-1e30, dtype=torch.float64))
logp_all = torch.log_softmax(masked, dim=1)
with torch.no_grad():
    old_logp = f32(logp_all.gather(1, action[:, None]).squeeze(1) + 0.5 * torch.randn(B))

logp = logp_all.gather(1, action[:, None]).squeeze(1)
probs = logp_all.exp()
entropy = -(probs * torch.where(legal, logp_all, torch.zeros_like(logp_all))).sum(1)
ratio = (logp - old_logp).exp()
nadv = (adv - adv.mean()) / (adv.std() + 1e-8)
pg = torch.max(-nadv * ratio, -nadv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
v_unclipped = (values - ret) ** 2
v_clipped = (old_value + torch.clamp(values - old_value, -vclip, vclip) - ret) ** 2
vloss = 0.5 * torch.max(v_unclipped, v_clipped).mean()
ent = entropy.mean()
loss = pg - ecoef * ent + vcoef * vloss
loss.backward()

out = {
    "B": B, "P": P, "clip": clip, "value_clip": vclip, "value_coef": vcoef, "entropy_coef": ecoef,
    "legal": legal.float().flatten().tolist(), "action": action.tolist(),
    "logits": logits.detach().flatten().tolist(), "values": values.detach().tolist(),
    "old_logprob": old_logp.tolist(), "old_value": old_value.tolist(), "returns": ret.tolist(), "advantages": adv.tolist(),
    "loss": loss.item(), "policy": pg.item(), "value": vloss.item(), "entropy": ent.item(),
    "dlogits": logits.grad.flatten().tolist(), "dvalues": values.grad.tolist(),
}
with open("ppo_loss.json", "w") as f:
    json.dump(out, f)
