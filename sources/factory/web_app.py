"""A small stateful shop served over real HTTP (stdlib http.server on 127.0.0.1, ephemeral port).

Pages: home with a search form, a paginated product list with category filters, product pages
with add-to-cart and review forms, the cart (remove, checkout), orders, and an account form.
POST forms change the server's state and answer 303 See Other; bad input (a quantity that is
not a number, more than the stock, an e-mail without @) re-renders the form with the error.
Texts avoid '<', '>' and '&' so accessibility trees stay plain text.
"""

from __future__ import annotations

import html
import random
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE_SIZE = 5
CATALOG = {
    "pantry": ["oat flakes", "basmati rice", "red lentils", "olive oil", "sea salt", "maple syrup"],
    "kitchen": ["chef knife", "cutting board", "cast iron pan", "wooden spoon", "tea kettle"],
    "garden": ["watering can", "seed tray", "pruning shears", "garden gloves", "compost bin"],
    "office": ["desk lamp", "paper notebook", "gel pens", "stapler", "monitor stand"],
}
ADJECTIVES = ("classic", "sturdy", "organic", "compact", "deluxe", "simple")


@dataclass
class Shop:
    """The server state: products, cart, reviews, account, orders."""

    products: dict[int, dict[str, Any]]
    cart: dict[int, int] = field(default_factory=dict)
    reviews: dict[int, list[str]] = field(default_factory=dict)
    account: dict[str, str] = field(
        default_factory=lambda: {"name": "Sam Lee", "email": "sam@shop.local"}
    )
    orders: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def seeded(cls, rng: random.Random) -> Shop:
        products, pid = {}, 1
        for category in sorted(CATALOG):
            for name in rng.sample(CATALOG[category], rng.randint(3, len(CATALOG[category]))):
                products[pid] = {
                    "id": pid,
                    "name": name,
                    "category": category,
                    "price": rng.randint(150, 6000) / 100,
                    "stock": rng.randint(0, 12),
                    "blurb": f"A {rng.choice(ADJECTIVES)} {name} for everyday use.",
                }
                pid += 1
        shop = cls(products)
        for pid in rng.sample(sorted(products), rng.randint(0, 2)):
            shop.cart[pid] = rng.randint(1, 2)
        return shop


def _page(title: str, body: str, cart_count: int) -> str:
    nav = (
        f"<nav><a href='/'>Home</a> <a href='/products'>Products</a> "
        f"<a href='/cart'>Cart ({cart_count})</a> <a href='/orders'>Orders</a> "
        f"<a href='/account'>Account</a></nav>"
    )
    search = (
        "<form action='/search' method='get'><label for='q'>Search products</label>"
        "<input type='search' id='q' name='q'><button type='submit'>Search</button></form>"
    )
    return (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)} - Pantry Shop</title></head>"
        f"<body>{nav}{search}<main>{body}</main>"
        f"<footer><p>Pantry Shop demo store</p></footer></body></html>"
    )


def _money(value: float) -> str:
    return f"${value:.2f}"


class ShopHandler(BaseHTTPRequestHandler):
    """Routes requests to pages of the `shop` the server was built with."""

    shop: Shop  # set on the subclass built per server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # no access log on stderr

    def _send(self, status: int, title: str, body: str) -> None:
        data = _page(title, body, sum(self.shop.cart.values())).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, location: str) -> None:
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        parts = [p for p in url.path.split("/") if p]
        with self.shop.lock:
            if not parts:
                self._home()
            elif parts == ["products"]:
                self._products(query)
            elif (
                len(parts) == 2
                and parts[0] == "product"
                and parts[1].isdigit()
                and int(parts[1]) in self.shop.products
            ):
                self._product(int(parts[1]), "")
            elif parts == ["search"]:
                self._search(query.get("q", ""))
            elif parts == ["cart"]:
                self._cart()
            elif parts == ["orders"]:
                self._orders()
            elif parts == ["account"]:
                self._account("Saved." if query.get("saved") else "")
            else:
                self._send(
                    HTTPStatus.NOT_FOUND,
                    "Not found",
                    f"<h1>Page not found</h1><p>There is no page at {html.escape(url.path)}.</p>",
                )

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        parts = [p for p in urlsplit(self.path).path.split("/") if p]
        shop = self.shop
        with shop.lock:
            if parts == ["cart", "add"]:
                pid = int(form.get("pid", "0"))
                quantity = form.get("quantity", "").strip()
                stock = shop.products[pid]["stock"]
                if not quantity.isdigit() or int(quantity) == 0:
                    return self._product(pid, f"Quantity must be a whole number, not '{quantity}'.")
                if shop.cart.get(pid, 0) + int(quantity) > stock:
                    return self._product(pid, f"Only {stock} in stock.")
                shop.cart[pid] = shop.cart.get(pid, 0) + int(quantity)
                return self._redirect("/cart")
            if parts == ["cart", "remove"]:
                shop.cart.pop(int(form.get("pid", "0")), None)
                return self._redirect("/cart")
            if parts == ["checkout"]:
                if not shop.cart:
                    return self._redirect("/cart")
                items = [
                    (shop.products[pid]["name"], qty) for pid, qty in sorted(shop.cart.items())
                ]
                total = sum(shop.products[pid]["price"] * qty for pid, qty in shop.cart.items())
                for pid, qty in shop.cart.items():
                    shop.products[pid]["stock"] -= qty
                shop.orders.append(
                    {"number": 1001 + len(shop.orders), "items": items, "total": total}
                )
                shop.cart.clear()
                return self._redirect("/orders")
            if parts == ["account"]:
                email = form.get("email", "").strip()
                if "@" not in email:
                    return self._account(f"Please enter a valid e-mail address, not '{email}'.")
                shop.account = {"name": form.get("name", "").strip(), "email": email}
                return self._redirect("/account?saved=1")
            if len(parts) == 3 and parts[0] == "product" and parts[2] == "review":
                pid = int(parts[1])
                text = form.get("review", "").strip()
                if not text:
                    return self._product(pid, "A review cannot be empty.")
                shop.reviews.setdefault(pid, []).append(text)
                return self._redirect(f"/product/{pid}")
        self._send(HTTPStatus.NOT_FOUND, "Not found", "<h1>Page not found</h1>")

    def _links(self, products: list[dict[str, Any]]) -> str:
        return (
            "<ul>"
            + "".join(
                f"<li><a href='/product/{p['id']}'>{p['name']}</a> {_money(p['price'])}</li>"
                for p in products
            )
            + "</ul>"
        )

    def _home(self) -> None:
        featured = sorted(self.shop.products.values(), key=lambda p: (-p["stock"], p["id"]))[:3]
        self._send(
            HTTPStatus.OK,
            "Home",
            "<h1>Welcome to Pantry Shop</h1><h2>Featured</h2>" + self._links(featured),
        )

    def _products(self, query: dict[str, str]) -> None:
        category = query.get("category", "")
        items = [
            p for p in self.shop.products.values() if not category or p["category"] == category
        ]
        pages = max(1, -(-len(items) // PAGE_SIZE))
        page = min(max(1, int(query["page"]) if query.get("page", "").isdigit() else 1), pages)
        suffix = f"&category={category}" if category else ""
        filters = " ".join(
            f"<a href='/products?category={c}'>{c.title()}</a>" for c in sorted(CATALOG)
        )
        nav = []
        if page > 1:
            nav.append(f"<a href='/products?page={page - 1}{suffix}'>Previous</a>")
        nav.append(f"<span>Page {page} of {pages}</span>")
        if page < pages:
            nav.append(f"<a href='/products?page={page + 1}{suffix}'>Next</a>")
        heading = f"{category.title()} products" if category else "All products"
        self._send(
            HTTPStatus.OK,
            heading,
            f"<h1>{heading}</h1><p>Filter: {filters} "
            f"<a href='/products'>All</a></p>"
            + self._links(items[(page - 1) * PAGE_SIZE : page * PAGE_SIZE])
            + f"<p>{' '.join(nav)}</p>",
        )

    def _product(self, pid: int, error: str) -> None:
        p = self.shop.products[pid]
        reviews = self.shop.reviews.get(pid, [])
        body = (
            f"<h1>{p['name']}</h1><p>{p['blurb']}</p><p>Price: {_money(p['price'])}</p>"
            f"<p>In stock: {p['stock']}</p><p>Category: {p['category']}</p>"
            + (f"<p role='alert'>{html.escape(error)}</p>" if error else "")
            + "<form action='/cart/add' method='post'>"
            f"<input type='hidden' name='pid' value='{pid}'><label for='quantity'>Quantity</label>"
            "<input type='text' id='quantity' name='quantity' value='1'>"
            "<button type='submit'>Add to cart</button></form><h2>Reviews</h2>"
            + (
                "<ul>" + "".join(f"<li>{html.escape(r)}</li>" for r in reviews) + "</ul>"
                if reviews
                else "<p>No reviews yet.</p>"
            )
            + f"<form action='/product/{pid}/review' method='post'><label for='review'>Your review"
            "</label><input type='text' id='review' name='review'><button type='submit'>Post review"
            "</button></form>"
        )
        self._send(HTTPStatus.BAD_REQUEST if error else HTTPStatus.OK, p["name"], body)

    def _search(self, q: str) -> None:
        hits = [
            p
            for p in self.shop.products.values()
            if q.lower().strip() and q.lower().strip() in f"{p['name']} {p['category']}"
        ]
        body = f"<h1>Results for '{html.escape(q)}'</h1>" + (
            self._links(hits) if hits else f"<p>No products match '{html.escape(q)}'.</p>"
        )
        self._send(HTTPStatus.OK, f"Search: {q}", body)

    def _cart(self) -> None:
        shop = self.shop
        if not shop.cart:
            return self._send(HTTPStatus.OK, "Cart", "<h1>Your cart</h1><p>Your cart is empty.</p>")
        rows, total = [], 0.0
        for pid, qty in sorted(shop.cart.items()):
            p = shop.products[pid]
            total += p["price"] * qty
            rows.append(
                f"<tr><td><a href='/product/{pid}'>{p['name']}</a></td><td>{qty}</td>"
                f"<td>{_money(p['price'] * qty)}</td><td><form action='/cart/remove' "
                f"method='post'><input type='hidden' name='pid' value='{pid}'>"
                f"<button type='submit'>Remove {p['name']}</button></form></td></tr>"
            )
        self._send(
            HTTPStatus.OK,
            "Cart",
            "<h1>Your cart</h1><table><tr><th>Item</th><th>Quantity</th>"
            f"<th>Subtotal</th><th></th></tr>{''.join(rows)}</table><p>Total: {_money(total)}</p>"
            "<form action='/checkout' method='post'><button type='submit'>Checkout</button></form>",
        )

    def _orders(self) -> None:
        orders = self.shop.orders
        body = "<h1>Your orders</h1>" + (
            "<ul>"
            + "".join(
                f"<li>Order {o['number']}: {', '.join(f'{n} x{q}' for n, q in o['items'])}, total "
                f"{_money(o['total'])}</li>"
                for o in orders
            )
            + "</ul>"
            if orders
            else "<p>No orders yet.</p>"
        )
        self._send(HTTPStatus.OK, "Orders", body)

    def _account(self, message: str) -> None:
        a = self.shop.account
        self._send(
            HTTPStatus.OK if message in ("", "Saved.") else HTTPStatus.BAD_REQUEST,
            "Account",
            "<h1>Account</h1>"
            + (f"<p role='alert'>{html.escape(message)}</p>" if message else "")
            + "<form action='/account' method='post'><label for='name'>Name</label>"
            f"<input type='text' id='name' name='name' value='{html.escape(a['name'])}'>"
            "<label for='email'>E-mail</label><input type='email' id='email' name='email' "
            f"value='{html.escape(a['email'])}'><button type='submit'>Save</button></form>",
        )


class ShopServer:
    """The shop on 127.0.0.1 at an ephemeral port, served from a daemon thread."""

    def __init__(self, shop: Shop) -> None:
        handler = type("BoundShopHandler", (ShopHandler,), {"shop": shop})
        self.shop = shop
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join()

    def __enter__(self) -> ShopServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
