#!/usr/bin/env python3
"""Write examples/requests.jsonl: a realistic mixed batch for `deepbatch run`.

300 requests in the OpenAI Batch API format, mixing:
  - /v1/chat/completions and /v1/completions,
  - short questions, paragraph-length prompts and multi-turn conversations,
  - max_tokens from 16 to 256,
  - greedy requests and sampled ones with a temperature and a seed,
  - about a third sharing one long (~400-token) system prompt (prefix caching),
  - a few with stop strings, a few with n=2.

Deterministic (fixed seed, no network, standard library only).
Usage: python3 scripts/gen_example_requests.py [--count N] [--out PATH]   (from the repository root)
"""
import argparse
import json
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parent.parent

SUPPORT_POLICY = " ".join([
    "You are the support assistant of Northwind Outfitters, an online shop for hiking, camping and climbing gear.",
    "Answer in a friendly, concise tone, in the language of the customer, and never invent facts about orders.",
    "Orders ship from our warehouse in Lyon within two business days; express orders placed before noon ship the same day.",
    "Standard delivery takes three to five business days inside the European Union and seven to twelve elsewhere.",
    "Customers may return unused items within sixty days for a full refund; worn footwear can be returned within thirty days",
    "if it shows no more than light indoor use. Refunds go back to the original payment method within five business days",
    "after the return is inspected. Gift cards cannot be refunded but never expire.",
    "Tents, sleeping bags and backpacks carry a five-year warranty against manufacturing defects; climbing hardware such as",
    "carabiners, belay devices and harnesses must never be repaired and is replaced instead when a defect is confirmed.",
    "Ropes are excluded from the warranty once they have been used for a fall or are older than three years.",
    "When a customer reports a safety problem with climbing equipment, tell them to stop using it at once and to contact",
    "safety@northwind.example with the batch number printed on the item. Do not speculate about the cause.",
    "Members of the Trailblazer club get free shipping on every order, early access to sales and a ten percent discount",
    "that cannot be combined with other promotions. Membership costs twenty-nine euros per year and renews automatically",
    "unless it is cancelled from the account page at least one day before the renewal date.",
    "We repair zippers, buckles and seams of soft goods for a flat fee of fifteen euros plus shipping; repairs take about",
    "three weeks. We do not repair electronics such as headlamps or GPS devices; those go back to their manufacturer.",
    "If you do not know the answer, say so and offer to open a ticket with a human agent, who answers within one business day.",
    "Never ask for full card numbers or passwords. Order numbers look like NW- followed by eight digits.",
    "Keep answers under one hundred and fifty words unless the customer explicitly asks for more detail.",
])

SUPPORT_QUESTIONS = [
    "My order NW-20481377 still has not shipped after three days. What is going on?",
    "Can I return hiking boots I wore twice on a trail?",
    "How long does delivery to Canada take?",
    "My carabiner gate sticks after a rainy trip. Can you repair it?",
    "Is the Trailblazer discount valid during the summer sale?",
    "How do I cancel my membership before it renews?",
    "The zipper on my tent door broke. What does a repair cost?",
    "My headlamp stopped charging after a month. What should I do?",
    "I bought a rope two years ago and took a short fall on it. Is it still under warranty?",
    "Can I get a refund on a gift card I never used?",
    "When will I get my money back for a returned jacket?",
    "I think my harness buckle has a crack. Is it safe?",
    "Do you ship express orders on Saturdays?",
    "What is the warranty on sleeping bags?",
    "Could you tell me what my order number looks like? I lost the email.",
    "Does free shipping for members apply to returns too?",
    "I was charged twice for the same order. Who can help me?",
    "Can you give me more detail on how inspections of returned items work? Please be thorough.",
]

GENERAL_QUESTIONS = [
    "What is the capital of Australia?",
    "Explain in two sentences why the sky is blue.",
    "Give me three tips for staying focused while studying.",
    "What is the difference between a list and a tuple in Python?",
    "Write a haiku about autumn leaves.",
    "How do vaccines train the immune system?",
    "Summarize the plot of Romeo and Juliet in one paragraph.",
    "What are the main causes of inflation?",
    "Suggest a name for a bakery that specializes in sourdough bread.",
    "How many minutes are there in a week? Show your reasoning.",
    "Translate 'Where is the train station?' into French and Spanish.",
    "What does a compiler do?",
    "List five fruits that are rich in vitamin C.",
    "Why do cats purr?",
    "Write a short, polite email declining a meeting invitation.",
    "What is photosynthesis?",
    "Describe the rules of chess for a complete beginner.",
    "Give an example of a metaphor and explain it.",
    "What is the Pythagorean theorem?",
    "How should I prepare for a job interview?",
    "Explain recursion to a ten-year-old.",
    "What are black holes made of?",
    "Recommend a beginner workout routine for three days a week.",
    "What is the boiling point of water at the top of Mount Everest, roughly?",
]

SYSTEM_PROMPTS = [
    "You are a helpful assistant.",
    "You are a patient teacher who explains things step by step.",
    "You answer in one short sentence.",
    "You are a senior software engineer reviewing code.",
]

MULTI_TURN = [
    [("user", "I want to learn to cook. Where should I start?"),
     ("assistant", "Start with a few simple dishes such as scrambled eggs, pasta with tomato sauce and a salad."),
     ("user", "Great, how do I make the tomato sauce?")],
    [("user", "What is a prime number?"),
     ("assistant", "A prime number is a whole number greater than 1 whose only divisors are 1 and itself."),
     ("user", "Is 91 prime?")],
    [("user", "Recommend a book about space."),
     ("assistant", "Try 'Cosmos' by Carl Sagan: it is readable and inspiring."),
     ("user", "Something more recent, please.")],
]

COMPLETION_PROMPTS = [
    "Once upon a time, in a village at the edge of a great forest,",
    "The three most important things to remember when learning a new language are",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "Q: What is the largest planet in the solar system?\nA:",
    "The recipe for a simple vinaigrette is as follows:\n1.",
    "In 1969, the Apollo 11 mission",
    "Dear hiring manager,\n\nI am writing to apply for",
    "The following is a list of common houseplants that are easy to care for:\n-",
    "import numpy as np\n\n# Compute the mean of each column of a matrix\n",
    "Breaking news: scientists have discovered",
    "The weather tomorrow will be",
    "Chapter 1\n\nThe rain had not stopped for three days when",
    "SELECT name, email FROM users WHERE",
    "Top 5 reasons to learn to play a musical instrument:\n1.",
    "The mitochondria is",
]

LONG_CONTEXT = (
    "The history of the bicycle begins in the early nineteenth century with the draisine, a two-wheeled frame the rider "
    "pushed along with his feet. Pedals attached to the front wheel appeared in the 1860s, and the high-wheeler followed, "
    "fast but dangerous. The safety bicycle of the 1880s, with two wheels of equal size and a chain drive to the rear "
    "wheel, settled the basic shape that most bicycles still have. Pneumatic tires, invented shortly afterwards, made "
    "riding far more comfortable, and the bicycle became a common means of transport for workers and a symbol of freedom "
    "for many women at the end of the century. "
)

STOP_SETS = [["\n\n"], ["\n"], ["."], ["Q:", "\n\n"], ["###"]]


def request(custom_id, url, body):
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


def sampling(rng, body):
    """Greedy for about half of the requests; otherwise a temperature and a seed."""
    if rng.random() < 0.5:
        body["temperature"] = 0
    else:
        body["temperature"] = rng.choice([0.3, 0.7, 0.8, 1.0])
        body["seed"] = rng.randrange(1, 100000)
        if rng.random() < 0.3:
            body["top_p"] = rng.choice([0.9, 0.95])
    return body


def support_chat(rng, i):
    question = rng.choice(SUPPORT_QUESTIONS)
    body = {"model": "default", "messages": [{"role": "system", "content": SUPPORT_POLICY},
                                             {"role": "user", "content": question}],
            "max_tokens": rng.choice([32, 64, 96, 128, 192, 256])}
    return request(f"support-{i:04d}", "/v1/chat/completions", sampling(rng, body))


def general_chat(rng, i):
    messages = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": rng.choice(SYSTEM_PROMPTS)})
    if rng.random() < 0.15:
        turns = rng.choice(MULTI_TURN)
        messages += [{"role": role, "content": text} for role, text in turns]
    elif rng.random() < 0.2:
        question = rng.choice(GENERAL_QUESTIONS)
        messages.append({"role": "user", "content": [{"type": "text", "text": "Please answer briefly."},
                                                     {"type": "text", "text": question}]})
    else:
        messages.append({"role": "user", "content": rng.choice(GENERAL_QUESTIONS)})
    body = {"model": "default", "messages": messages, "max_tokens": rng.choice([16, 32, 64, 128, 256])}
    if rng.random() < 0.1:
        body["stop"] = rng.choice(STOP_SETS)
    if rng.random() < 0.05:
        body["n"] = 2
        body["temperature"] = 0.8
        body["seed"] = rng.randrange(1, 100000)
        return request(f"chat-{i:04d}", "/v1/chat/completions", body)
    return request(f"chat-{i:04d}", "/v1/chat/completions", sampling(rng, body))


def completion(rng, i):
    if rng.random() < 0.15:
        prompt = LONG_CONTEXT * rng.choice([1, 2, 3]) + "In summary,"
    else:
        prompt = rng.choice(COMPLETION_PROMPTS)
    body = {"model": "default", "prompt": prompt, "max_tokens": rng.choice([16, 24, 48, 64, 128, 200, 256])}
    if rng.random() < 0.15:
        body["stop"] = rng.choice(STOP_SETS)
    return request(f"cmpl-{i:04d}", "/v1/completions", sampling(rng, body))


def generate(count, seed):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind = i % 3  # a third each: shared long system prompt, other chats, plain completions
        if kind == 0:
            out.append(support_chat(rng, i))
        elif kind == 1:
            out.append(general_chat(rng, i))
        else:
            out.append(completion(rng, i))
    rng.shuffle(out)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--out", default=str(ROOT / "examples" / "requests.jsonl"))
    args = parser.parse_args()
    rows = generate(args.count, args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} requests to {args.out}")


if __name__ == "__main__":
    main()
