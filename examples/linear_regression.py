# The "PyTorch: optim" example of PyTorch's tutorials ("Learning PyTorch with Examples",
# pytorch/tutorials, beginner_source/examples_nn/polynomial_optim.py, BSD-3-Clause): fit
# y = sin(x) with a + b x + c x^2 + d x^3, a linear regression on (x, x^2, x^3), with
# nn.Linear, MSELoss and RMSprop. The program is the tutorial's, unchanged but for the
# import line; the comments are ours.
import tensorlib as torch
import math


# inputs and targets
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# the features (x, x^2, x^3) by broadcasting: shape (2000, 3)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

# a linear layer on the three features; Flatten(0, 1) turns its (2000, 1) output into (2000,)
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
loss_fn = torch.nn.MSELoss(reduction='sum')

learning_rate = 1e-3
optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
for t in range(2000):
    y_pred = model(xx)

    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
