import type { RouteEntry } from '../routes';
import { SignInPage } from './sign-in';

/** The pages the API's links point to, and signing in. */
export const authRoutes: RouteEntry[] = [{ path: '/sign-in', component: SignInPage, public: true }];
