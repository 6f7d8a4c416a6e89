#!/usr/bin/python3
"""PyTorch reference of nets.Recurrent (study 000's CNN-LSTM), for
recurrent_test.go, which runs it with Debian's CPU torch:

    /usr/bin/python3 recurrent_reference.py IN.json OUT.json

IN.json holds the config, every weight in PyTorch's layout, a segment of
T x B input rows (time-major), the start state h0/c0, reset flags and the
coefficients rp/rv of the loss sum(policy*rp) + sum(value*rv). OUT.json
gets the policy logits, values, final state and the loss's gradient for
every weight. The model is written from the study's description with
torch.nn layers; it shares no code with the Go one. Arithmetic is float64.
"""
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


class CNNLSTM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        cin = c["planes"]
        self.convs = nn.ModuleList()
        for ch in c["conv_channels"]:
            self.convs.append(nn.Conv2d(cin, ch, 3, padding=1))
            cin = ch
        cells = c["height"] * c["width"]
        self.board_fc = nn.Linear(cin * cells, c["board_dense"])
        self.flat_fc = nn.Linear(c["flat"], c["flat_dense"])
        self.lstm = nn.LSTMCell(c["board_dense"] + c["flat_dense"], c["hidden"])
        self.card_head = nn.Linear(c["hidden"], c["cards"])
        self.square_head = nn.Linear(c["hidden"], c["squares"])
        self.critic = nn.Linear(c["hidden"], 1)

    def forward(self, x, h, cst, reset):
        c = self.c
        T, B = reset.shape
        nb = c["planes"] * c["height"] * c["width"]
        rows = x.reshape(T * B, -1)
        board = rows[:, :nb].reshape(T * B, c["planes"], c["height"], c["width"])
        for conv in self.convs:
            board = F.relu(conv(board))
        zb = F.relu(self.board_fc(board.flatten(1)))
        zf = F.relu(self.flat_fc(rows[:, nb:]))
        z = torch.cat([zb, zf], 1).reshape(T, B, -1)
        hs = []
        for t in range(T):
            keep = (1 - reset[t]).unsqueeze(1)
            h, cst = self.lstm(z[t], (h * keep, cst * keep))
            hs.append(h)
        hs = torch.stack(hs).reshape(T * B, -1)
        card = self.card_head(hs)
        square = self.square_head(hs)
        policy = (card.unsqueeze(2) + square.unsqueeze(1)).reshape(T * B, -1)
        value = self.critic(hs).squeeze(1)
        return policy, value, h, cst


def main():
    d = json.load(open(sys.argv[1]))
    m = CNNLSTM(d["config"])
    params = dict(m.named_parameters())
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(torch.tensor(d["weights"][name]).reshape(p.shape))
    T, B = d["T"], d["B"]
    x = torch.tensor(d["input"]).reshape(T, B, -1)
    h0 = torch.tensor(d["h0"]).reshape(B, -1)
    c0 = torch.tensor(d["c0"]).reshape(B, -1)
    reset = torch.tensor(d["reset"]).reshape(T, B)
    policy, value, h, cst = m(x, h0, c0, reset)
    loss = (policy * torch.tensor(d["rp"]).reshape(policy.shape)).sum() + (value * torch.tensor(d["rv"])).sum()
    loss.backward()
    out = {"policy": policy.flatten().tolist(), "value": value.tolist(), "hT": h.flatten().tolist(),
           "cT": cst.flatten().tolist(), "grad": {n: p.grad.flatten().tolist() for n, p in params.items()}}
    json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
